// The node table (docs/web.md, "The node table"): every node of the cluster, 100,000 of them
// usable. Rows are virtual (only the visible ones are in the DOM, at a fixed height, in a
// scroll area as tall as all of them), fetched a page at a time from GET /clusterws/nodetable
// (table/rows.js), sorted by the server. A noderange filter, a column chooser (kept in
// localStorage), groups as a side list, a selection for the action bar (actions.js), keyboard
// navigation, and live state from the event stream: changed nodes' rows are read again, power
// events fill the power column; the action bar's "Node status" results fill the nodestat column.
import * as api from '../api.js';
import { mountActions } from '../actions.js';
import { RowSource } from '../table/rows.js';

/** A row's height in pixels: fixed, so row i sits at i * ROW. */
const ROW = 30;
/** Rows rendered above and below the visible ones. */
const OVERSCAN = 8;
const COLUMNS_KEY = 'clusterws.nodetable.columns';
const DEFAULT_COLUMNS = ['power', 'nodestat', 'status', 'groups', 'mgt', 'lastevent'];
/** Columns the page keeps itself (not node attributes): not sortable by the server. */
const LIVE = { power: 'Power', nodestat: 'Nodestat', lastevent: 'Last event' };

/** An ApiError's text as the API words it (one line or several). */
function errorText(err) {
  const e = err && err.body && err.body.error;
  if (Array.isArray(e)) return e.join('\n');
  if (typeof e === 'string') return e;
  return (err && err.message) || String(err);
}

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('aria-') || k === 'role' || k === 'for') e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

function savedColumns() {
  try {
    const c = JSON.parse(localStorage.getItem(COLUMNS_KEY));
    if (Array.isArray(c) && c.every((x) => typeof x === 'string')) return c;
  } catch {}
  return DEFAULT_COLUMNS.slice();
}

function timeText(ms) {
  return ms ? new Date(ms).toLocaleTimeString() : '';
}

export function mount(root, params) {
  let columns = savedColumns();
  const power = new Map(); // node -> "on"/"off", from power events
  const nodestat = new Map(); // node -> {text, failed}, from the bar's last "Node status" run
  const lastEvent = new Map(); // node -> ms of its last event
  const selected = new Set();
  let allMatching = false;
  let anchor = -1; // shift-click ranges start here
  let focusIndex = 0;
  let firstPaint = true;
  let filterStarted = 0;
  let stopped = false;

  const rows = new RowSource((totalChanged) => {
    if (totalChanged) sizeBody();
    render();
  });

  // -- layout -----------------------------------------------------------------------------
  const groupList = el('ul', { class: 'nt-grouplist' });
  const side = el(
    'nav',
    { class: 'nt-groups', 'aria-label': 'Groups' },
    el('h2', { text: 'Groups' }),
    groupList,
  );
  const actions = el('div', { class: 'nt-actions' });
  const filter = el('input', {
    id: 'nt-noderange',
    type: 'text',
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'e.g. rack1,-cn0[1-4]  (Enter)',
  });
  const filterError = el('div', { class: 'error nt-error', role: 'alert' });
  const count = el('span', { class: 'nt-count', 'aria-live': 'polite' });
  const allBox = el('input', { type: 'checkbox', id: 'nt-all' });
  const selCount = el('span', { class: 'nt-selcount' });
  const chooser = el('fieldset', { class: 'nt-chooser' }, el('legend', { text: 'Columns shown' }));
  const columnsPanel = el('details', { class: 'nt-columns' }, el('summary', { text: 'Columns' }), chooser);
  const bar = el(
    'div',
    { class: 'nt-bar' },
    el('label', { for: 'nt-noderange', class: 'nt-filter' }, 'Noderange', filter),
    columnsPanel,
    count,
    el('label', { for: 'nt-all' }, allBox, 'Select all matching'),
    selCount,
  );
  const head = el('div', { role: 'row', class: 'nt-row nt-head', 'aria-rowindex': '1' });
  const body = el('div', { class: 'nt-body', role: 'rowgroup' });
  const scroller = el(
    'div',
    { class: 'nt-scroll' },
    el('div', { role: 'rowgroup', class: 'nt-headgroup' }, head),
    body,
  );
  const grid = el('div', { class: 'nt-grid', role: 'grid', 'aria-label': 'Nodes', 'aria-multiselectable': 'true' }, scroller);
  const mainPart = el('section', { class: 'nt-main' }, actions, bar, filterError, grid);
  const view = el('div', { class: 'nt' }, side, mainPart);
  root.append(view);

  const unmountActions = mountActions(
    actions,
    () => {
      if (allMatching) return { range: rows.query.noderange || '/.*', count: rows.total };
      const names = [...selected];
      return { range: names.join(','), count: names.length };
    },
    {
      // nodestat is a probe, not an event: its column shows the last run's answer per node
      onResult: (node, r) => {
        if (r.action !== 'nodestat') return;
        nodestat.set(node, { text: r.text, failed: r.failed });
        render();
      },
    },
  );

  // -- columns ----------------------------------------------------------------------------
  function attrColumns() {
    return columns.filter((c) => !LIVE[c]);
  }

  function layoutColumns() {
    const widths = ['2.2rem', 'minmax(8rem, 12rem)', ...columns.map(() => 'minmax(7rem, 1fr)')];
    grid.style.setProperty('--nt-cols', widths.join(' '));
    grid.setAttribute('aria-colcount', String(columns.length + 2));
  }

  function renderHead() {
    const sortState = (c) =>
      rows.query.sort === c ? (rows.query.order === 'asc' ? 'ascending' : 'descending') : null;
    const header = (c, label) => {
      const cell = el('div', { role: 'columnheader', class: 'nt-cell' });
      if (LIVE[c]) {
        cell.textContent = label;
        return cell;
      }
      const s = sortState(c);
      if (s) cell.setAttribute('aria-sort', s);
      const b = el('button', { type: 'button', class: 'nt-sort', text: label });
      b.addEventListener('click', () => sortBy(c));
      cell.append(b);
      return cell;
    };
    head.replaceChildren(
      el('div', { role: 'columnheader', class: 'nt-cell' }, el('span', { class: 'nt-sr', text: 'Selected' })),
      header('node', 'Node'),
      ...columns.map((c) => header(c, LIVE[c] || c)),
    );
  }

  async function loadChooser() {
    let names = [];
    try {
      names = (await api.request('GET', '/nodetable/attributes')) || [];
    } catch (e) {
      return;
    }
    const boxes = [...Object.keys(LIVE), ...names].map((c) => {
      const box = el('input', { type: 'checkbox', checked: columns.includes(c), value: c });
      box.addEventListener('change', () => setColumn(c, box.checked));
      return el('label', { class: 'nt-choice' }, box, LIVE[c] || c);
    });
    chooser.append(...boxes);
  }

  async function setColumn(c, on) {
    columns = on ? [...columns.filter((x) => x !== c), c] : columns.filter((x) => x !== c);
    localStorage.setItem(COLUMNS_KEY, JSON.stringify(columns));
    layoutColumns();
    renderHead();
    const attrs = attrColumns();
    if (!LIVE[c]) {
      const sort = !on && rows.wanted.sort === c ? { sort: 'node', order: 'asc' } : {};
      await run(() => rows.apply({ attrs, ...sort }));
    } else {
      render();
    }
  }

  async function sortBy(c) {
    const cur = rows.wanted; // the order asked last, even while its first page is on its way
    const order = cur.sort === c && cur.order === 'asc' ? 'desc' : 'asc';
    if (await run(() => rows.apply({ sort: c, order }))) toTop();
    renderHead();
  }

  /** A new order or filter: the table starts again at its first row. */
  function toTop() {
    anchor = -1;
    focusIndex = 0;
    scroller.scrollTop = 0;
    sizeBody();
    paint();
  }

  /** Runs a query change; an error shows as the API words it. */
  async function run(fn) {
    try {
      await fn();
      filterError.textContent = '';
      filter.removeAttribute('aria-invalid');
      return true;
    } catch (e) {
      if (e && e.status === 401) return false;
      filterError.textContent = errorText(e);
      filter.setAttribute('aria-invalid', 'true');
      return false;
    }
  }

  // -- rows -------------------------------------------------------------------------------
  function sizeBody() {
    body.style.height = `${rows.total * ROW}px`;
    grid.setAttribute('aria-rowcount', String(rows.total + 1));
    count.textContent = `${rows.total.toLocaleString()} node${rows.total === 1 ? '' : 's'}`;
    if (focusIndex >= rows.total) focusIndex = Math.max(0, rows.total - 1);
  }

  const rendered = new Map(); // index -> row element
  let frame = 0;

  function render() {
    if (frame || stopped) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      paint();
    });
  }

  function cellText(r, c) {
    if (c === 'power') return power.get(r.node) || '';
    if (c === 'nodestat') return nodestat.get(r.node)?.text || '';
    if (c === 'lastevent') return timeText(lastEvent.get(r.node));
    return r[c] ?? '';
  }

  function isSelected(name) {
    return allMatching || selected.has(name);
  }

  function fillRow(e, i, r) {
    e.dataset.index = String(i);
    e.setAttribute('aria-rowindex', String(i + 2));
    e.style.transform = `translateY(${i * ROW}px)`;
    e.tabIndex = i === focusIndex ? 0 : -1;
    if (!r) {
      e.dataset.node = '';
      e.removeAttribute('aria-selected');
      e.replaceChildren(el('div', { role: 'gridcell', class: 'nt-cell nt-loading', text: '…' }));
      return;
    }
    const sel = isSelected(r.node);
    e.dataset.node = r.node;
    e.setAttribute('aria-selected', String(sel));
    const box = el('input', {
      type: 'checkbox',
      checked: sel,
      disabled: allMatching,
      tabIndex: -1,
      'aria-label': `Select ${r.node}`,
    });
    const link = el('a', { href: `#/node/${encodeURIComponent(r.node)}`, text: r.node, tabIndex: -1 });
    e.replaceChildren(
      el('div', { role: 'gridcell', class: 'nt-cell nt-check' }, box),
      el('div', { role: 'gridcell', class: 'nt-cell nt-name' }, link),
      ...columns.map((c) => {
        const t = cellText(r, c);
        const cell = el('div', { role: 'gridcell', class: `nt-cell nt-col-${c}`, text: t, title: t });
        if (c === 'power' && t) cell.classList.add(`nt-power-${t}`);
        if (c === 'nodestat' && nodestat.get(r.node)?.failed) cell.classList.add('nt-failed');
        return cell;
      }),
    );
  }

  function visibleRange() {
    const h = scroller.clientHeight || 600;
    const top = Math.max(0, scroller.scrollTop - head.offsetHeight);
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(rows.total - 1, Math.ceil((top + h) / ROW) + OVERSCAN);
    return [first, last];
  }

  function paint() {
    const [first, last] = visibleRange();
    const want = new Set();
    for (let i = first; i <= last; ++i) want.add(i);
    if (rows.total > 0) want.add(Math.min(focusIndex, rows.total - 1)); // focus stays in the DOM
    const hadFocus = body.contains(document.activeElement);
    for (const [i, e] of rendered) {
      if (!want.has(i)) {
        e.remove();
        rendered.delete(i);
      }
    }
    let missing = false;
    let shown = 0;
    for (const i of [...want].sort((a, b) => a - b)) {
      let e = rendered.get(i);
      if (!e) {
        e = el('div', { role: 'row', class: 'nt-row' });
        rendered.set(i, e);
        body.append(e);
      }
      const r = rows.row(i);
      if (!r) missing = true;
      else ++shown;
      fillRow(e, i, r);
    }
    if (hadFocus) rendered.get(focusIndex)?.focus({ preventScroll: true });
    if (missing && last >= first) rows.ensure(first, last).catch(() => {});
    selCount.textContent = allMatching
      ? `all ${rows.total.toLocaleString()} selected`
      : selected.size
        ? `${selected.size.toLocaleString()} selected`
        : '';
    if (shown > 0) {
      if (firstPaint) {
        firstPaint = false;
        performance.mark('nodetable-first-rows');
      }
      if (filterStarted) {
        performance.measure('nodetable-filter', { start: filterStarted, end: performance.now() });
        filterStarted = 0;
      }
    }
  }

  scroller.addEventListener('scroll', render, { passive: true });
  const resize = new ResizeObserver(render);
  resize.observe(scroller);

  // -- selection and keyboard ----------------------------------------------------------------
  async function selectRange(a, b, on) {
    const [lo, hi] = a < b ? [a, b] : [b, a];
    await rows.ensure(lo, hi);
    for (let i = lo; i <= hi; ++i) {
      const r = rows.row(i);
      if (r) (on ? selected.add(r.node) : selected.delete(r.node));
    }
    render();
  }

  function toggle(i, shift) {
    if (allMatching) return;
    const r = rows.row(i);
    if (!r) return;
    const on = !selected.has(r.node);
    if (shift && anchor >= 0) {
      selectRange(anchor, i, true);
    } else {
      if (on) selected.add(r.node);
      else selected.delete(r.node);
      anchor = i;
    }
    render();
  }

  body.addEventListener('click', (ev) => {
    const rowEl = ev.target.closest('.nt-row');
    if (!rowEl) return;
    const i = Number(rowEl.dataset.index);
    focusIndex = i;
    if (ev.target.matches('input[type=checkbox]')) {
      ev.preventDefault();
      toggle(i, ev.shiftKey);
      rowEl.focus({ preventScroll: true });
    } else if (!ev.target.closest('a')) {
      if (ev.shiftKey) toggle(i, true);
      rowEl.focus({ preventScroll: true });
      render();
    }
  });

  function moveFocus(i) {
    if (rows.total === 0) return;
    focusIndex = Math.max(0, Math.min(rows.total - 1, i));
    const top = focusIndex * ROW;
    const viewTop = scroller.scrollTop;
    const viewH = scroller.clientHeight - head.offsetHeight;
    if (top < viewTop) scroller.scrollTop = top;
    else if (top + ROW > viewTop + viewH) scroller.scrollTop = top + ROW - viewH;
    paint();
    rendered.get(focusIndex)?.focus({ preventScroll: true });
  }

  body.addEventListener('keydown', (ev) => {
    const page = Math.max(1, Math.floor((scroller.clientHeight - head.offsetHeight) / ROW) - 1);
    const moves = {
      ArrowDown: focusIndex + 1,
      ArrowUp: focusIndex - 1,
      PageDown: focusIndex + page,
      PageUp: focusIndex - page,
      Home: 0,
      End: rows.total - 1,
    };
    if (ev.key in moves) {
      ev.preventDefault();
      moveFocus(moves[ev.key]);
    } else if (ev.key === ' ') {
      ev.preventDefault();
      toggle(focusIndex, ev.shiftKey);
    } else if (ev.key === 'Enter') {
      const r = rows.row(focusIndex);
      if (r) {
        ev.preventDefault();
        location.hash = `#/node/${encodeURIComponent(r.node)}`;
      }
    }
  });

  allBox.addEventListener('change', () => {
    allMatching = allBox.checked;
    if (!allMatching) selected.clear();
    render();
  });

  // -- filter and groups ---------------------------------------------------------------------
  async function applyFilter(range) {
    filterStarted = performance.now();
    const ok = await run(() => rows.apply({ noderange: range }));
    if (!ok) {
      filterStarted = 0;
      return;
    }
    selected.clear();
    allMatching = false;
    allBox.checked = false;
    for (const b of groupList.querySelectorAll('button')) {
      b.setAttribute('aria-pressed', String(b.dataset.range === range));
    }
    toTop();
  }

  filter.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      applyFilter(filter.value.trim());
    }
  });

  async function loadGroups() {
    let names = [];
    try {
      names = (await api.request('GET', '/groups')) || [];
    } catch {
      return;
    }
    const item = (label, range) => {
      const b = el('button', { type: 'button', text: label, 'aria-pressed': String(range === rows.query.noderange) });
      b.dataset.range = range;
      b.addEventListener('click', () => {
        filter.value = range;
        applyFilter(range);
      });
      return el('li', {}, b);
    };
    groupList.replaceChildren(item('All nodes', ''), ...names.map((g) => item(g, g)));
  }

  // -- live state ------------------------------------------------------------------------------
  let stopEvents = null;
  let pending = new Set();
  let everything = false;
  let flush = 0;

  /** Reads again the visible rows of changed nodes (all of them when a group changed). */
  function refreshChanged() {
    flush = 0;
    const [first, last] = visibleRange();
    const names = pending;
    const all = everything;
    pending = new Set();
    everything = false;
    let lo = Infinity;
    let hi = -1;
    for (let i = first; i <= last; ++i) {
      const r = rows.row(i);
      if (all || (r && names.has(r.node))) {
        lo = Math.min(lo, i);
        hi = Math.max(hi, i);
      }
    }
    if (hi >= 0) rows.refresh(lo, hi).catch(() => {});
  }

  function onEvent(name, data) {
    const now = Date.now();
    if (name === 'power' && data && data.node) {
      power.set(data.node, data.power);
      lastEvent.set(data.node, now);
      render();
      return;
    }
    if (name === 'reset') {
      everything = true;
    } else if (name === 'changes' && data && Array.isArray(data.changes)) {
      for (const c of data.changes) {
        if (c.type === 'node') {
          pending.add(c.name);
          lastEvent.set(c.name, now);
          if (c.change !== 'changed') everything = true; // rows move: read the window again
        } else if (c.type === 'group') {
          everything = true; // inherited values of its members
        }
      }
    }
    if ((pending.size || everything) && !flush) flush = setTimeout(refreshChanged, 0);
  }

  function subscribe() {
    if (stopEvents) stopEvents();
    stopEvents = api.events('types=node,group,power', onEvent);
  }

  // -- start -----------------------------------------------------------------------------------
  layoutColumns();
  renderHead();
  (async () => {
    const ok = await run(() => rows.apply({ attrs: attrColumns() }));
    if (!ok && columns.length) {
      // a saved column the server no longer knows: back to the defaults
      columns = DEFAULT_COLUMNS.slice();
      layoutColumns();
      renderHead();
      await run(() => rows.apply({ attrs: attrColumns() }));
    }
    sizeBody();
    paint();
    subscribe();
    loadGroups();
    loadChooser();
  })();

  return () => {
    stopped = true;
    if (stopEvents) stopEvents();
    if (frame) cancelAnimationFrame(frame);
    if (flush) clearTimeout(flush);
    resize.disconnect();
    if (typeof unmountActions === 'function') unmountActions();
  };
}
