/* The offline report's data grid and failed-turn panel (workbench.views.tables, turn_detail).
   Every table marked data-wb-sortable gets a search box, click-to-sort headers, pages of
   10/25/50/100/all rows with one count, and its first columns (th.wb-key) kept in view when it
   scrolls sideways. A row with data-wb-key opens the panel of that turn, built from the page's
   <script type="application/json" class="wb-turn-data"> blocks with textContent only: every
   value from the data stays text. No network, and no string is ever parsed as markup or code.
   A table's data-wb-item ("turn" or "problem") is what its rows are, in the panel's words. Each
   cell gets its column's heading in data-label, which a narrow screen shows beside the value
   when the failed-turns grid is a stack of cards (report.css). */
(function () {
  'use strict';
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: 'base'});
  var ARROWS = {none: '\u2195', ascending: '\u25b2', descending: '\u25bc'};
  var SIZES = [10, 25, 50, 100, 0];
  var DEFAULT_SIZE = 25;
  var number = new Intl.NumberFormat('en-US');

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function sortKey(cell) {
    if (!cell || cell.classList.contains('null')) { return null; }
    var raw = cell.getAttribute('data-value');
    if (raw !== null) {
      var value = parseFloat(raw);
      return isNaN(value) ? null : value;
    }
    return cell.textContent.trim();
  }

  function compare(a, b) {
    var numA = typeof a === 'number', numB = typeof b === 'number';
    if (numA && numB) { return a < b ? -1 : (a > b ? 1 : 0); }
    if (numA !== numB) { return numA ? -1 : 1; }
    return collator.compare(a, b);
  }

  /* ------------------------------------------------------------------ the grid */
  function enhance(table) {
    if (table.hasAttribute('data-wb-ready') || !table.tHead || !table.tBodies.length) { return; }
    table.setAttribute('data-wb-ready', '');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var order = rows.map(function (row, i) { return i; });
    var state = {query: '', page: 0, size: rows.length > DEFAULT_SIZE ? DEFAULT_SIZE : 0, shown: order};

    var tools = el('div', 'wb-tools');
    var search = el('input', 'wb-search');
    search.type = 'search';
    search.placeholder = 'Search rows';
    search.setAttribute('aria-label', 'Search ' + (table.caption ? table.caption.textContent : 'table rows'));
    var sizeLabel = el('label', 'wb-size', 'Rows per page ');
    var select = el('select');
    SIZES.forEach(function (size) {
      var option = el('option', null, size ? String(size) : 'all');
      option.value = String(size);
      option.selected = size === state.size;
      select.appendChild(option);
    });
    sizeLabel.appendChild(select);
    var count = el('span', 'wb-count');
    count.setAttribute('aria-live', 'polite');
    var more = el('span', 'wb-more', 'more columns: scroll the table sideways \u2192');
    more.hidden = true;
    var previous = el('button', 'wb-page', '\u2039 Previous page');
    var next = el('button', 'wb-page', 'Next page \u203a');
    previous.type = next.type = 'button';
    [search, sizeLabel, count, previous, next, more].forEach(function (node) { tools.appendChild(node); });
    if (rows.length <= SIZES[0]) { sizeLabel.hidden = previous.hidden = next.hidden = true; }
    var box = table.parentNode.classList.contains('wb-scroll') ? table.parentNode : table;
    if (table.caption) {  /* the caption above the tools, shown once */
      box.parentNode.insertBefore(el('div', 'wb-grid-title', table.caption.textContent), box);
      table.caption.classList.add('wb-hidden-caption');
    }
    box.parentNode.insertBefore(tools, box);

    function render() {
      var query = state.query;
      state.shown = order.filter(function (i) { return query === '' || texts[i].indexOf(query) !== -1; });
      var total = state.shown.length;
      var size = state.size || total || 1;
      var pages = Math.max(1, Math.ceil(total / size));
      state.page = Math.min(state.page, pages - 1);
      var first = state.page * size, last = Math.min(total, first + size);
      var visible = {};
      for (var k = first; k < last; k++) { visible[state.shown[k]] = true; }
      rows.forEach(function (row, i) { row.hidden = !visible[i]; });
      var text = total ? 'Showing ' + number.format(first + 1) + '\u2013' + number.format(last) + ' of ' +
        number.format(total) + ' rows' : 'Showing 0 of 0 rows';
      if (query !== '') { text += ' (filtered from ' + number.format(rows.length) + ')'; }
      count.textContent = text;
      more.hidden = !(box.scrollWidth > box.clientWidth + 1);
      previous.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
      pinKeys(table);
    }

    search.addEventListener('input', function () {
      state.query = search.value.trim().toLowerCase();
      state.page = 0;
      render();
    });
    select.addEventListener('change', function () {
      state.size = parseInt(select.value, 10);
      state.page = 0;
      render();
    });
    previous.addEventListener('click', function () { state.page -= 1; render(); });
    next.addEventListener('click', function () { state.page += 1; render(); });

    function sortBy(column, direction) {
      var keys = rows.map(function (row) { return sortKey(row.cells[column]); });
      order.sort(function (i, j) {
        var a = keys[i], b = keys[j];
        if (a === null || b === null) { return a === b ? i - j : (a === null ? 1 : -1); }
        var c = compare(a, b);
        if (c === 0) { return i - j; }
        return direction === 'ascending' ? c : -c;
      });
      order.forEach(function (i) { body.appendChild(rows[i]); });
      headers.forEach(function (th, k) {
        var sorted = k === column ? direction : 'none';
        th.setAttribute('aria-sort', sorted);
        th.querySelector('.wb-arrow').textContent = ARROWS[sorted];
      });
      state.page = 0;
      render();
    }

    headers.forEach(function (th, column) {
      var heading = th.textContent.trim();
      rows.forEach(function (row) { if (row.cells[column]) { row.cells[column].setAttribute('data-label', heading); } });
      var button = el('button', 'wb-sort');
      button.type = 'button';
      button.title = 'Sort by ' + heading + ' (again: the other way)';
      while (th.firstChild) { button.appendChild(th.firstChild); }
      var arrow = el('span', 'wb-arrow', ARROWS.none);
      arrow.setAttribute('aria-hidden', 'true');
      button.appendChild(arrow);
      th.appendChild(button);
      th.setAttribute('aria-sort', 'none');
      button.addEventListener('click', function () {
        sortBy(column, th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending');
      });
    });

    var item = table.getAttribute('data-wb-item') || 'turn';
    rows.forEach(function (row) {
      if (!row.hasAttribute('data-wb-key')) { return; }
      row.tabIndex = 0;
      row.classList.add('wb-openable');
      row.title = 'Open this ' + item + ' (its document, programs, verdicts and raw output)';
      row.addEventListener('click', function (event) {
        /* a control of the row's own cells (a long cell's details), not the drill-down around the table */
        var control = event.target.closest('summary, details, a, button, input, select');
        if (control && row.contains(control)) { return; }
        openTurn(row, function () { return state.shown.map(function (i) { return rows[i]; }); }, item);
      });
      row.addEventListener('keydown', function (event) {
        if (event.key === 'Enter' && event.target === row) {
          openTurn(row, function () { return state.shown.map(function (i) { return rows[i]; }); }, item);
        }
      });
    });
    table.wbRender = render;
    render();
  }

  /* The first columns (th.wb-key) stay in view: each sticks at the width of those before it. */
  function pinKeys(table) {
    var heads = table.tHead ? table.tHead.querySelectorAll('th.wb-key') : [];
    var left = 0;
    Array.prototype.forEach.call(heads, function (th) {
      var column = th.cellIndex;
      th.style.left = left + 'px';
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var cell = row.cells[column];
        if (cell) { cell.style.left = left + 'px'; }
      });
      left += th.getBoundingClientRect().width;
    });
  }

  /* ------------------------------------------------------------------ the panel */
  var data = null;

  function turnData() {
    if (data === null) {
      data = {docs: {}, turns: {}};
      document.querySelectorAll('script.wb-turn-data').forEach(function (block) {
        var part = JSON.parse(block.textContent);
        Object.keys(part.docs).forEach(function (k) { data.docs[k] = part.docs[k]; });
        Object.keys(part.turns).forEach(function (k) { data.turns[k] = part.turns[k]; });
      });
    }
    return data;
  }

  var dialog = null, current = null, listing = null, currentItem = 'turn';

  function panel() {
    if (dialog === null) {
      dialog = el('dialog', 'wb-detail');
      var bar = el('div', 'wb-detail-bar');
      var title = el('h2', 'wb-detail-title');
      var where = el('span', 'wb-detail-where');
      var previous = el('button', 'wb-page wb-previous');
      var next = el('button', 'wb-page wb-next');
      var close = el('button', 'wb-close', 'Close');
      [previous, next, close].forEach(function (b) { b.type = 'button'; });
      [title, where, previous, next, close].forEach(function (node) { bar.appendChild(node); });
      dialog.appendChild(bar);
      dialog.appendChild(el('div', 'wb-detail-body'));
      document.body.appendChild(dialog);
      close.addEventListener('click', function () { dialog.close(); });
      previous.addEventListener('click', function () { step(-1); });
      next.addEventListener('click', function () { step(1); });
      dialog.addEventListener('click', function (event) { if (event.target === dialog) { dialog.close(); } });
      dialog.addEventListener('close', function () { if (current) { current.focus(); } });
    }
    return dialog;
  }

  function step(delta) {
    var list = listing ? listing() : [];
    var at = list.indexOf(current);
    if (at < 0) { return; }
    var target = list[at + delta];
    if (target) { openTurn(target, listing, currentItem); }
  }

  function openTurn(row, list, item) {
    var key = row.getAttribute('data-wb-key');
    var turn = turnData().turns[key];
    if (turn) {  /* the key names the system, record and turn; the data leaves them out */
      var names = JSON.parse(key);
      turn.system = names[0];
      turn.record_id = names[1];
      turn.turn = names[2];
    }
    var box = panel();
    current = row;
    listing = list;
    currentItem = item || 'turn';
    box.setAttribute('aria-label', 'Failed ' + currentItem);
    box.querySelector('.wb-previous').textContent = '\u2039 Previous failed ' + currentItem;
    box.querySelector('.wb-next').textContent = 'Next failed ' + currentItem + ' \u203a';
    var rowsShown = list();
    var at = rowsShown.indexOf(row);
    var bar = box.querySelector('.wb-detail-bar');
    var multiTurn = turn && (turn.turn !== 0 || turn.history.length || turn.doc);  /* GSM8K, MATH: no turns */
    bar.querySelector('.wb-detail-title').textContent = turn ?
      turn.record_id + (multiTurn ? ', turn ' + turn.turn : '') : 'No detail for this row';
    bar.querySelector('.wb-detail-where').textContent = (turn && turn.system ? 'system ' + turn.system + ' \u00b7 ' : '') +
      (at >= 0 ? 'row ' + number.format(at + 1) + ' of ' + number.format(rowsShown.length) : '');
    var buttons = bar.querySelectorAll('button.wb-page');
    buttons[0].disabled = at <= 0;
    buttons[1].disabled = at < 0 || at >= rowsShown.length - 1;
    var body = box.querySelector('.wb-detail-body');
    body.replaceChildren(turn ? content(turn, turnData().docs[turn.doc]) :
      el('p', 'wb-note', 'The page holds no detail for this ' + currentItem + '.'));
    body.scrollTop = 0;
    if (!box.open) { box.showModal(); }
  }

  /* A long value in a small table: its beginning, the whole in the tooltip (and in full elsewhere in the panel). */
  function clip(value) {
    if (missing(value) || String(value).length <= 120) { return value; }
    var node = el('span', null, String(value).slice(0, 120) + '\u2026');
    node.title = String(value);
    return node;
  }

  function missing(value) { return value === null || value === undefined || value === ''; }

  function text(value) {
    return missing(value) ? el('span', 'wb-muted', '\u2013') : document.createTextNode(String(value));
  }

  function facts(pairs) {
    var table = el('table', 'wb-facts');
    pairs.forEach(function (pair) {
      if (pair[2] && missing(pair[1])) { return; }  /* optional fact, absent */
      var tr = el('tr');
      tr.appendChild(el('th', null, pair[0]));
      var td = el('td');
      td.appendChild(pair[1] instanceof Node ? pair[1] : text(pair[1]));
      tr.appendChild(td);
      table.appendChild(tr);
    });
    return table;
  }

  function grid(headings, rows) {
    var table = el('table', 'wb-mini');
    var head = el('tr');
    headings.forEach(function (h) { head.appendChild(el('th', null, h)); });
    table.appendChild(el('thead')).appendChild(head);
    var body = el('tbody');
    rows.forEach(function (cells) {
      var tr = el('tr');
      cells.forEach(function (cell) {
        var td = el('td');
        td.appendChild(cell instanceof Node ? cell : text(cell));
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    return table;
  }

  function section(title, node) {
    var part = el('section', 'wb-detail-part');
    part.appendChild(el('h3', null, title));
    part.appendChild(node);
    return part;
  }

  function verdict(correct) {
    if (correct === true) { return el('span', 'wb-ok', 'correct'); }
    if (correct === false) { return el('span', 'wb-wrong', 'wrong'); }
    return text(null);
  }

  function trace(view) {
    var part = el('div', 'wb-trace');
    if (!view) { part.appendChild(el('p', 'wb-muted', '(no program)')); return part; }
    part.appendChild(el('pre', 'wb-program', view.program));
    var status = el('p');
    status.appendChild(document.createTextNode('status '));
    status.appendChild(el('b', null, view.status));
    status.appendChild(document.createTextNode(', value '));
    status.appendChild(el('b', null, missing(view.value) ? '\u2013' : view.value));
    if (view.message) { status.appendChild(el('span', 'wb-muted', ' ' + view.message)); }
    part.appendChild(status);
    if (view.steps.length) {
      var list = el('ul', 'wb-steps');
      view.steps.forEach(function (s) { list.appendChild(el('li')).appendChild(el('code', null, s)); });
      part.appendChild(list);
    }
    return part;
  }

  function markClass(inGold, inPredicted) {
    return inGold && inPredicted ? 'wb-mark-both' : (inGold ? 'wb-mark-gold' : 'wb-mark-pred');
  }

  function marked(pieces, gold, predicted) {
    var p = el('p', 'wb-doc-text');
    pieces.forEach(function (piece, i) {
      var g = gold.indexOf(i) !== -1, q = predicted.indexOf(i) !== -1;
      p.appendChild(g || q ? el('mark', markClass(g, q), piece) : document.createTextNode(piece));
    });
    return p;
  }

  function hasCell(list, r, c) {
    return list.some(function (rc) { return rc[0] === r && rc[1] === c; });
  }

  function documentView(doc, turn) {
    var gold = turn.gold_marks || {pre: [], post: [], cells: []};
    var predicted = turn.predicted_marks || {pre: [], post: [], cells: []};
    var part = el('div', 'wb-doc');
    var legend = el('p', 'wb-legend');
    legend.appendChild(el('mark', 'wb-mark-gold', 'gold program'));
    legend.appendChild(el('mark', 'wb-mark-pred', 'predicted program'));
    legend.appendChild(el('mark', 'wb-mark-both', 'both'));
    part.appendChild(legend);
    if (doc.pre.join('')) { part.appendChild(marked(doc.pre, gold.pre, predicted.pre)); }
    if (doc.rows.length || doc.columns.length) {
      var table = el('table', 'wb-mini wb-doc-table');
      var columns = doc.columns.slice();
      if (doc.rows.some(function (r) { return r.length > columns.length; })) { columns.unshift(''); }
      var head = el('tr');
      columns.forEach(function (c) { head.appendChild(el('th', null, c)); });
      table.appendChild(el('thead')).appendChild(head);
      var body = el('tbody');
      doc.rows.forEach(function (cells, r) {
        var tr = el('tr');
        cells.forEach(function (cell, c) {
          var td = el(c === 0 ? 'th' : 'td');
          var g = hasCell(gold.cells, r, c), q = hasCell(predicted.cells, r, c);
          td.appendChild(g || q ? el('mark', markClass(g, q), cell) : document.createTextNode(cell));
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      table.appendChild(body);
      part.appendChild(el('div', 'wb-doc-scroll')).appendChild(table);
    } else {
      part.appendChild(el('p', 'wb-muted', '(no table)'));
    }
    if (doc.post.join('')) { part.appendChild(marked(doc.post, gold.post, predicted.post)); }
    var marks = part.querySelectorAll('mark:not(.wb-legend mark)');
    var found = el('p', 'wb-note');
    if (marks.length) {
      var seen = [];
      Array.prototype.forEach.call(marks, function (m) { if (seen.indexOf(m.textContent) < 0) { seen.push(m.textContent); } });
      found.appendChild(document.createTextNode('Numbers the programs use, marked: ' + seen.join(', ') + ' '));
      var go = el('button', 'wb-page', 'Scroll to the first marked number');
      go.type = 'button';
      go.addEventListener('click', function () { marks[0].scrollIntoView({block: 'center'}); });
      found.appendChild(go);
    } else {
      found.textContent = 'No number of the programs appears in this document as written.';
    }
    part.insertBefore(found, legend.nextSibling);
    return part;
  }

  function content(turn, doc) {
    var root = el('div', 'wb-detail-grid');
    var left = el('div', 'wb-detail-col');
    var right = el('div', 'wb-detail-col');
    root.appendChild(left);
    root.appendChild(right);
    left.appendChild(el('p', 'wb-question', missing(turn.question) ? '(no question)' : turn.question));
    var differ = !missing(turn.gold_note);
    left.appendChild(facts([
      [differ ? 'gold answer (written)' : 'gold answer', turn.gold],
      [differ ? 'gold answer (executed)' : 'gold (executed)', turn.gold_executed === turn.gold ? null : turn.gold_executed, true],
      ['predicted answer', turn.predicted],
      ['answer graded', turn.graded],
      ['verdict', verdict(turn.correct)],
      ['reason', turn.reason],
      ["grader's detail", turn.detail, true],
      ['extraction rule', turn.rule, true],
      ['answer taken from', turn.source, true],
      ['error type', turn.error_type, true]
    ]));
    if (differ) { left.appendChild(el('p', 'wb-gold-note', turn.gold_note)); }
    if (turn.policies.length) {
      left.appendChild(section('Verdict of each grading policy', grid(['policy', 'verdict', 'reason', 'answer', 'detail'],
        turn.policies.map(function (p) { return [p[0], verdict(p[1]), p[2], clip(p[3]), clip(p[4])]; }))));
    }
    if (turn.history.length) {
      left.appendChild(section('Conversation so far', grid(['turn', 'question', 'gold', 'predicted', 'verdict'],
        turn.history.map(function (h) { return [h[0], h[1], h[2], h[3], verdict(h[4])]; }))));
    }
    if (turn.gold_trace || turn.predicted_trace) {
      var programs = el('div');
      programs.appendChild(el('h4', null, 'Gold program'));
      programs.appendChild(trace(turn.gold_trace));
      programs.appendChild(el('h4', null, 'Predicted program'));
      programs.appendChild(trace(turn.predicted_trace));
      left.appendChild(section('Programs and their steps', programs));
    }
    left.appendChild(section('Data-quality flags', turn.flags.length ?
      grid(['category', 'rule', 'confidence', 'evidence'], turn.flags.map(function (f) {
        return [f[0], f[1], f[2] === null ? null : f[2].toFixed(2), f[3]];
      })) : el('p', 'wb-muted', 'No automatic flag on this ' + currentItem + '.')));
    if (doc) { right.appendChild(section('Document', documentView(doc, turn))); }
    if (!missing(turn.gold_solution)) { right.appendChild(section('Gold solution', el('pre', 'wb-raw', turn.gold_solution))); }
    right.appendChild(section('Raw model output', missing(turn.raw) ? el('p', 'wb-muted', '(none)') :
      el('pre', 'wb-raw', turn.raw)));
    return root;
  }

  document.querySelectorAll('table.wb-table[data-wb-sortable]').forEach(enhance);
  window.addEventListener('resize', function () {
    document.querySelectorAll('table.wb-table[data-wb-ready]').forEach(pinKeys);
  });
  document.querySelectorAll('details').forEach(function (details) {
    details.addEventListener('toggle', function () {
      details.querySelectorAll('table.wb-table[data-wb-ready]').forEach(function (t) { t.wbRender(); });
    });
  });
})();
