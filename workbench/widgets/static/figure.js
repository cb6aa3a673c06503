// A linked plot's front end (workbench/widgets/figures.py): plotly's own FigureWidget front end,
// drawn only once its element is in the page with a width, and drawn again when that width changes.
//
// Why: anywidget calls plotly's render before JupyterLab attaches the output to the page. plotly
// then measures nothing: the plot takes plotly's default 700 px whatever the output's width, the
// title's subtitle is drawn over the title, and nothing ever lays the plot out again (plotly's
// FigureWidget resizes on JupyterLab's layout messages, which anywidget does not pass on).
//
// `workbenchFigure(plotlyWidget)` takes the default export of plotly's module (a function that
// makes {initialize, render} for one model) and returns the same shape. The kernel side turns on
// plotly's `responsive` config, whose handler (`_responsiveChartHandler` on the plot's element,
// what plotly calls on a window resize) is called here when the output's width changes too
// (a side panel opened or closed).

function workbenchFigure(plotlyWidget) {
  return () => {
    const plotly = typeof plotlyWidget === "function" ? plotlyWidget() : plotlyWidget;
    return {
      initialize(context) {
        return plotly.initialize ? plotly.initialize(context) : undefined;
      },
      render(context) {
        const { el } = context;
        let remove = null;
        let width = 0;
        const observer = new ResizeObserver(() => {
          const now = el.clientWidth;
          if (now <= 0 || now === width) return; // hidden, detached, or only its height changed
          width = now;
          if (remove === null) {
            remove = plotly.render(context) || (() => {});
          } else if (typeof el._responsiveChartHandler === "function") {
            el._responsiveChartHandler();
          }
        });
        observer.observe(el);
        return () => {
          observer.disconnect();
          if (remove !== null) remove();
        };
      },
    };
  };
}
