// The failed-turns grid in a live kernel (workbench/widgets/grid.py): an anywidget front end.
// The kernel holds every row; this draws one page of them and sends what the analyst asks for
// (page, page size, sort, search, a row selected, the filter cleared) back as traits. Every value
// is set with textContent, so a model output or id shows as text; the grid's root carries the
// classes mathjax_ignore and tex2jax_ignore, so JupyterLab's MathJax never typesets "$821,000 ... $824,000" as maths.

const SIZES = [10, 25, 50, 100];

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function fmt(n) {
  return Number(n).toLocaleString("en-US");
}

function render({ model, el: root }) {
  root.classList.add("wb-grid", "tex2jax_ignore", "mathjax_ignore");

  const filterLine = el("div", "wb-grid-filter");
  filterLine.setAttribute("role", "status");
  const filterText = el("span", "wb-grid-filter-text");
  const clearButton = el("button", "wb-grid-button", "Clear the filter");
  clearButton.type = "button";
  clearButton.title = "Show the failed rows of every group again";
  clearButton.addEventListener("click", () => model.send({ type: "clear_filter" }));
  filterLine.append(filterText, " ", clearButton);

  const bar = el("div", "wb-grid-bar");
  const search = el("input", "wb-grid-search");
  search.type = "search";
  search.placeholder = "Search every column (record id, answer, reason…)";
  search.setAttribute("aria-label", "Search the rows");
  const sizeLabel = el("label", "wb-grid-size", "Rows per page ");
  const size = el("select");
  for (const n of SIZES) {
    const option = el("option", null, n);
    option.value = String(n);
    size.append(option);
  }
  sizeLabel.append(size);
  const count = el("span", "wb-grid-count");
  const first = el("button", "wb-grid-button", "« First page");
  const prev = el("button", "wb-grid-button", "‹ Previous page");
  const next = el("button", "wb-grid-button", "Next page ›");
  const last = el("button", "wb-grid-button", "Last page »");
  for (const b of [first, prev, next, last]) b.type = "button";
  bar.append(search, sizeLabel, count, first, prev, next, last);

  const caption = el("div", "wb-grid-caption");
  const scroll = el("div", "wb-grid-scroll");
  const table = el("table", "wb-grid-table");
  const thead = el("thead");
  const tbody = el("tbody");
  table.append(thead, tbody);
  scroll.append(table);
  const empty = el("p", "wb-grid-empty");
  root.append(caption, filterLine, bar, scroll, empty);

  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      model.set("query", search.value);
      model.set("page", 0);
      model.save_changes();
    }, 250);
  });
  size.addEventListener("change", () => {
    model.set("page_size", Number(size.value));
    model.set("page", 0);
    model.save_changes();
  });
  const pages = () => Math.max(1, Math.ceil(model.get("total") / model.get("page_size")));
  const go = (page) => {
    const target = Math.min(Math.max(0, page), pages() - 1);
    if (target !== model.get("page")) {
      model.set("page", target);
      model.save_changes();
    }
  };
  first.addEventListener("click", () => go(0));
  prev.addEventListener("click", () => go(model.get("page") - 1));
  next.addEventListener("click", () => go(model.get("page") + 1));
  last.addEventListener("click", () => go(pages() - 1));

  function drawHead() {
    thead.replaceChildren();
    const tr = el("tr");
    const sort = model.get("sort");
    const descending = model.get("descending");
    for (const column of model.get("columns")) {
      const th = el("th", column.key ? "wb-grid-key" : "");
      th.scope = "col";
      const button = el("button", "wb-grid-sort", column.label);
      button.type = "button";
      button.title = `Sort by ${column.label}`;
      if (sort === column.name) {
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        button.append(el("span", "wb-grid-arrow", descending ? " ▼" : " ▲"));
      }
      button.addEventListener("click", () => {
        if (model.get("sort") === column.name) {
          model.set("descending", !model.get("descending"));
        } else {
          model.set("sort", column.name);
          model.set("descending", false);
        }
        model.set("page", 0);
        model.save_changes();
      });
      th.append(button);
      if (column.kind === "num") th.classList.add("num");
      tr.append(th);
    }
    thead.append(tr);
  }

  function pin() {
    // The first columns that name a row stay in view when the table scrolls sideways.
    let left = 0;
    const heads = thead.querySelectorAll("th.wb-grid-key");
    heads.forEach((th, i) => {
      th.style.left = `${left}px`;
      tbody.querySelectorAll(`tr > td:nth-child(${i + 1})`).forEach((td) => (td.style.left = `${left}px`));
      left += th.getBoundingClientRect().width;
    });
  }

  function drawRows() {
    tbody.replaceChildren();
    const columns = model.get("columns");
    const selected = model.get("selected");
    for (const [key, cells] of model.get("rows")) {
      const tr = el("tr");
      tr.dataset.wbKey = key;
      if (model.get("selectable")) {
        tr.tabIndex = 0;
        tr.title = "Open this row's detail under the grid";
        tr.classList.add("wb-grid-pick");
      }
      if (key === selected) tr.classList.add("wb-grid-selected");
      cells.forEach(([text, full], i) => {
        const column = columns[i] || {};
        const td = el("td");
        if (column.key) td.classList.add("wb-grid-key");
        if (column.kind === "num") td.classList.add("num");
        if (text === null) {
          td.classList.add("null");
          td.textContent = "—";
        } else if (full !== null && full !== undefined) {
          const details = el("details", "wb-grid-long");
          const summary = el("summary", null, text);
          summary.title = "Show the whole text";
          summary.addEventListener("click", (event) => event.stopPropagation());
          details.append(summary, el("div", "wb-grid-full", full));
          td.append(details);
        } else {
          td.textContent = text;
        }
        tr.append(td);
      });
      const choose = () => {
        model.set("selected", key);
        model.save_changes();
      };
      if (model.get("selectable")) {
        tr.addEventListener("click", choose);
        tr.addEventListener("keydown", (event) => {
          if (event.key === "Enter") choose();
        });
      }
      tbody.append(tr);
    }
    requestAnimationFrame(pin);
  }

  function drawBar() {
    const total = model.get("total");
    const page = model.get("page");
    const n = model.get("page_size");
    const shown = model.get("rows").length;
    const items = model.get("items");
    const start = total ? page * n + 1 : 0;
    count.textContent = total
      ? `Showing ${fmt(start)}–${fmt(start + shown - 1)} of ${fmt(total)} ${items}` +
        (total !== model.get("all_rows") ? ` (${fmt(model.get("all_rows"))} in all)` : "")
      : `No ${items} match`;
    first.disabled = prev.disabled = page <= 0;
    next.disabled = last.disabled = page >= pages() - 1;
    size.value = String(n);
    if (search.value !== model.get("query") && document.activeElement !== search) search.value = model.get("query");
    const filter = model.get("filter_text");
    filterText.textContent = filter;
    filterLine.hidden = !filter;
    caption.textContent = model.get("caption");
    caption.hidden = !model.get("caption");
    empty.textContent = total ? "" : model.get("empty_text");
    empty.hidden = Boolean(total);
    scroll.hidden = !total;
    bar.hidden = !model.get("all_rows");
  }

  function draw() {
    drawHead();
    drawRows();
    drawBar();
  }
  draw();
  const events = ["rows", "columns", "total", "sort", "descending", "filter_text", "page_size", "caption"];
  for (const name of events) model.on(`change:${name}`, draw);
  model.on("change:selected", () => {
    const key = model.get("selected");
    tbody.querySelectorAll("tr").forEach((tr) => tr.classList.toggle("wb-grid-selected", tr.dataset.wbKey === key));
  });
  return () => {
    for (const name of events) model.off(`change:${name}`, draw);
  };
}

export default { render };
