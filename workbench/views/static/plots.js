/* Draw each figure of the page from its JSON (workbench.report.runner.render_html). On a narrow
   screen (a phone) plotly's toolbar is left out, as it would cover the title, and the title and
   subtitle are wrapped again to the figure's width: plotly does not wrap text, and the figures
   are laid out for a wide page (workbench.views.plots breaks subtitles at 60 characters).
   A click on a point of a trace whose meta says {"opens": "customdata"} (05-history's runs,
   workbench.views.history) opens the point's customdata, a link relative to the page; only
   http(s) and file links are followed, never a javascript: or data: one. */
(function () {
  'use strict';
  var NARROW = 700;  /* px: below this width a figure has no toolbar and rewrapped titles */
  var LINE = {title: 22, subtitle: 17};  /* px per line of each, as the figures' top margin counts them */

  function lines(text) { return text ? String(text).split('<br>').length : 0; }

  /* text (plotly's markup: <br> between lines) rewrapped at spaces to lines of at most chars characters */
  function rewrap(text, chars) {
    var words = String(text).split('<br>').join(' ').split(' ').filter(function (w) { return w !== ''; });
    var out = [], line = '';
    words.forEach(function (word) {
      if (line && (line + ' ' + word).length > chars) { out.push(line); line = word; } else { line = line ? line + ' ' + word : word; }
    });
    if (line) { out.push(line); }
    return out.join('<br>');
  }

  function fitTitle(layout, width) {
    var title = layout.title;
    if (!title) { return; }
    if (typeof title === 'string') { title = layout.title = {text: title}; }
    var added = 0;
    if (title.text) {
      var before = lines(title.text);
      title.text = rewrap(title.text, Math.max(16, Math.floor((width - 40) / 10)));
      added += (lines(title.text) - before) * LINE.title;
    }
    if (title.subtitle && title.subtitle.text) {
      var was = lines(title.subtitle.text);
      title.subtitle.text = rewrap(title.subtitle.text, Math.max(20, Math.floor((width - 40) / 7)));
      added += (lines(title.subtitle.text) - was) * LINE.subtitle;
    }
    if (added > 0) {
      layout.margin = layout.margin || {};
      layout.margin.t = (layout.margin.t || 80) + added;
      if (layout.height) { layout.height += added; }
    }
  }

  /* the page a clicked point opens, or '' (a trace that does not open links, a point without one) */
  function pointLink(point) {
    var meta = point && point.data && point.data.meta;
    var link = point && point.customdata;
    if (!meta || meta.opens !== 'customdata' || typeof link !== 'string' || !link) { return ''; }
    var url;
    try { url = new URL(link, document.baseURI); } catch (e) { return ''; }
    return ['http:', 'https:', 'file:'].indexOf(url.protocol) >= 0 ? url.href : '';
  }

  function openClicked(event) {
    var link = pointLink(event && event.points && event.points[0]);
    if (link) { window.location.assign(link); }
  }

  document.querySelectorAll('.plotly-figure').forEach(function (div) {
    var spec = JSON.parse(document.getElementById(div.id + '-spec').textContent);
    var layout = spec.layout || {};
    var narrow = div.clientWidth < NARROW;
    if (narrow) { fitTitle(layout, div.clientWidth); }
    Plotly.newPlot(div, spec.data, layout, {responsive: true, displaylogo: false, displayModeBar: narrow ? false : 'hover'})
      .then(function () { div.on('plotly_click', openClicked); });
  });
})();
