
(function () {
  'use strict';
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: 'base'});
  var ARROWS = {none: '\u2195', ascending: '\u25b2', descending: '\u25bc'};

  function sortKey(cell) {
    if (!cell || cell.classList.contains('null')) { return null; }
    var raw = cell.getAttribute('data-value');
    if (raw !== null) {
      var number = parseFloat(raw);
      return isNaN(number) ? null : number;
    }
    return cell.textContent.trim();
  }

  function compare(a, b) {
    var numA = typeof a === 'number', numB = typeof b === 'number';
    if (numA && numB) { return a < b ? -1 : (a > b ? 1 : 0); }
    if (numA !== numB) { return numA ? -1 : 1; }
    return collator.compare(a, b);
  }

  function enhance(table) {
    if (table.hasAttribute('data-wb-ready') || !table.tHead || !table.tBodies.length) { return; }
    table.setAttribute('data-wb-ready', '');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);

    var tools = document.createElement('div');
    tools.className = 'wb-tools';
    var search = document.createElement('input');
    search.type = 'search';
    search.className = 'wb-search';
    search.placeholder = 'Search rows';
    search.setAttribute('aria-label', 'Search ' + (table.caption ? table.caption.textContent : 'table rows'));
    var count = document.createElement('span');
    count.className = 'wb-count';
    count.setAttribute('aria-live', 'polite');
    tools.appendChild(search);
    tools.appendChild(count);
    var anchor = table.parentNode.classList.contains('wb-scroll') ? table.parentNode : table;
    anchor.parentNode.insertBefore(tools, anchor);

    function filter() {
      var query = search.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row, i) {
        var hit = query === '' || texts[i].indexOf(query) !== -1;
        row.hidden = !hit;
        if (hit) { shown += 1; }
      });
      count.textContent = shown + ' of ' + rows.length + ' rows';
    }
    search.addEventListener('input', filter);
    filter();

    function sortBy(column, direction) {
      var keys = rows.map(function (row) { return sortKey(row.cells[column]); });
      var order = rows.map(function (row, i) { return i; });
      order.sort(function (i, j) {
        var a = keys[i], b = keys[j];
        if (a === null || b === null) { return a === b ? i - j : (a === null ? 1 : -1); }
        var c = compare(a, b);
        if (c === 0) { return i - j; }
        return direction === 'ascending' ? c : -c;
      });
      order.forEach(function (i) { body.appendChild(rows[i]); });
      headers.forEach(function (th, k) {
        var state = k === column ? direction : 'none';
        th.setAttribute('aria-sort', state);
        th.querySelector('.wb-arrow').textContent = ARROWS[state];
      });
    }

    headers.forEach(function (th, column) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'wb-sort';
      while (th.firstChild) { button.appendChild(th.firstChild); }
      var arrow = document.createElement('span');
      arrow.className = 'wb-arrow';
      arrow.setAttribute('aria-hidden', 'true');
      arrow.textContent = ARROWS.none;
      button.appendChild(arrow);
      th.appendChild(button);
      th.setAttribute('aria-sort', 'none');
      button.addEventListener('click', function () {
        sortBy(column, th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending');
      });
    });
  }

  document.querySelectorAll('table.wb-table[data-wb-sortable]').forEach(enhance);
})();
