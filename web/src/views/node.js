// One node's page, #/node/<name> (docs/web.md, "Actions and the node page"): its attributes
// (GET /nodes/{node}, lsdef's view: inherited group values included), editable (Save sends
// PUT /nodes/{node} with the changed attributes only; the API's message on a refusal, which
// changes nothing), the action bar for this node, a link to its console, and tabs for vitals,
// inventory and the event log, each read only when asked for (they talk to the BMC).
// The page follows the node's change and power events, so edits made elsewhere and power
// results of any client show up without a reload.
import * as api from '../api.js';
import { mountActions, errorText } from '../actions.js';

const TABS = [
  { id: 'attributes', label: 'Attributes' },
  { id: 'vitals', label: 'Vitals', path: 'vitals', what: 'vitals' },
  { id: 'inventory', label: 'Inventory', path: 'inventory', what: 'inventory' },
  { id: 'eventlog', label: 'Event log', path: 'eventlog', what: 'event log' },
];

function make(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

export function mount(el, params) {
  const name = params[0] || '';
  const stops = [];
  const page = make('article', { class: 'node-page', 'aria-labelledby': 'node-title' });
  const title = make('h1', { id: 'node-title', text: name });
  const powerLine = make('p', { class: 'node-power' });
  const powerValue = make('span', { class: 'node-power-value', text: 'not read yet' });
  const consoleLink = make('a', { href: `#/console/${encodeURIComponent(name)}`, text: 'Console' });
  powerLine.append('Power: ', powerValue, ' · ', consoleLink, ' · ');
  powerLine.append(make('a', { href: '#/nodes', text: 'All nodes' }));
  const actions = make('div', { class: 'node-actions' });
  page.append(title, powerLine, actions);

  const setPower = (text, failed) => {
    powerValue.textContent = text;
    powerValue.classList.toggle('bad', !!failed);
  };
  stops.push(
    mountActions(actions, () => ({ range: name, count: 1 }), {
      onResult: (node, r) => {
        if (node === name && r.action === 'power') setPower(r.text, r.failed);
      },
    }),
  );

  // tabs (WAI-ARIA tabs: arrow keys move between them)
  const tablist = make('div', { role: 'tablist', 'aria-label': `${name} details`, class: 'tabs' });
  const panels = {};
  const tabs = {};
  for (const t of TABS) {
    const tab = make('button', {
      type: 'button',
      role: 'tab',
      id: `tab-${t.id}`,
      'aria-controls': `panel-${t.id}`,
      'aria-selected': 'false',
      tabindex: '-1',
      text: t.label,
    });
    tabs[t.id] = tab;
    tablist.append(tab);
    const panel = make('section', {
      role: 'tabpanel',
      id: `panel-${t.id}`,
      'aria-labelledby': `tab-${t.id}`,
      class: 'tab-panel',
    });
    panel.hidden = true;
    panels[t.id] = panel;
  }
  page.append(tablist, ...Object.values(panels));
  el.append(page);

  const loaded = new Set();
  function select(id, focus) {
    for (const t of TABS) {
      const on = t.id === id;
      tabs[t.id].setAttribute('aria-selected', on ? 'true' : 'false');
      tabs[t.id].tabIndex = on ? 0 : -1;
      panels[t.id].hidden = !on;
    }
    if (focus) tabs[id].focus();
    if (!loaded.has(id)) {
      loaded.add(id);
      const t = TABS.find((x) => x.id === id);
      if (t.path) loadReading(t);
    }
  }
  tablist.addEventListener('click', (e) => {
    const b = e.target.closest('[role=tab]');
    if (b) select(b.id.slice(4), false);
  });
  tablist.addEventListener('keydown', (e) => {
    const i = TABS.findIndex((t) => tabs[t.id] === document.activeElement);
    if (i < 0) return;
    let j = -1;
    if (e.key === 'ArrowRight') j = (i + 1) % TABS.length;
    else if (e.key === 'ArrowLeft') j = (i + TABS.length - 1) % TABS.length;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = TABS.length - 1;
    if (j >= 0) {
      e.preventDefault();
      select(TABS[j].id, true);
    }
  });

  // vitals, inventory, event log: read from the BMC when their tab is first opened, and again
  // with the panel's Reload button
  async function loadReading(t) {
    const panel = panels[t.id];
    const reload = make('button', { type: 'button', text: `Reload ${t.what}` });
    reload.addEventListener('click', () => loadReading(t));
    const state = make('p', { class: 'muted', role: 'status', text: `Reading the ${t.what} from the BMC…` });
    panel.replaceChildren(reload, state);
    reload.disabled = true;
    try {
      const res = await api.request('GET', `/nodes/${api.nr(name)}/${t.path}?format=detail`);
      const r = (res && res[name]) || {};
      if (r.error) {
        panel.append(make('p', { class: 'error', role: 'alert', text: r.message || r.error }));
      } else if (t.id === 'eventlog') {
        const lines = Array.isArray(r.eventlog) ? r.eventlog : [];
        const list = make('ol', { class: 'node-eventlog', 'aria-label': 'Event log entries' });
        for (const l of lines) list.append(make('li', { text: l }));
        panel.append(list);
      } else {
        const table = make('table', { class: 'kv', 'aria-label': t.label });
        const body = make('tbody');
        const messages = [];
        const pairs = Object.entries(r).filter(([k]) => k !== 'rc');
        for (const [k, v] of pairs) {
          if (k === 'Message') {
            messages.push(...(Array.isArray(v) ? v : [v]));
            continue;
          }
          body.append(make('tr', {}, make('th', { scope: 'row', text: k }), make('td', { text: String(v) })));
        }
        table.append(body);
        panel.append(table);
        for (const m of messages) panel.append(make('p', { class: 'muted', text: m }));
      }
      state.textContent = '';
    } catch (err) {
      state.textContent = '';
      panel.append(make('p', { class: 'error', role: 'alert', text: errorText(err) }));
    } finally {
      reload.disabled = false;
    }
  }

  // attributes: a table, sorted by name; Edit turns the values into inputs
  const attrPanel = panels.attributes;
  const attrBar = make('div', { class: 'node-attr-bar' });
  const edit = make('button', { type: 'button', text: 'Edit' });
  const save = make('button', { type: 'submit', text: 'Save' });
  const cancel = make('button', { type: 'button', text: 'Cancel edit' });
  save.hidden = cancel.hidden = true;
  attrBar.append(edit, save, cancel);
  const attrError = make('p', { class: 'error', role: 'alert' });
  const attrNote = make('p', { class: 'muted', role: 'status' });
  const attrTable = make('table', { class: 'kv node-attrs', 'aria-label': 'Attributes' });
  const attrBody = make('tbody');
  attrTable.append(attrBody);
  // a form: Enter in a value saves (and the browser keeps the password input in its form)
  const attrForm = make('form', { class: 'node-attr-form', 'aria-label': 'Node attributes' });
  attrForm.append(attrBar, attrError, attrNote, attrTable);
  attrPanel.append(attrForm);

  let attrs = {}; // the values as last read
  let editing = false;
  let staleWhileEditing = false;

  function renderAttrs() {
    const rows = [];
    for (const k of Object.keys(attrs).sort()) {
      const v = attrs[k];
      const td = make('td');
      const secret = /password/i.test(k); // bmcpassword: root reads it, the screen does not show it
      if (editing) {
        const input = make('input', { name: k, value: v, 'aria-label': k, autocomplete: 'off', spellcheck: 'false' });
        if (secret) {
          input.type = 'password';
          input.autocomplete = 'new-password';
        }
        input.dataset.original = v;
        td.append(input);
      } else {
        td.textContent = secret && v ? '••••••••' : v;
      }
      rows.push(make('tr', {}, make('th', { scope: 'row', text: k }), td));
    }
    if (editing) {
      // one new attribute at a time (a name the node has no value for yet)
      const nk = make('input', { name: '', 'aria-label': 'New attribute name', placeholder: 'attribute', class: 'new-name' });
      const nv = make('input', { 'aria-label': 'New attribute value', placeholder: 'value', class: 'new-value' });
      rows.push(make('tr', { class: 'new' }, make('th', { scope: 'row' }, nk), make('td', {}, nv)));
    }
    attrBody.replaceChildren(...rows);
  }

  async function loadAttrs() {
    try {
      const res = await api.request('GET', `/nodes/${api.nr(name)}`);
      attrs = (res && res[name]) || {};
      for (const k of Object.keys(attrs)) {
        if (Array.isArray(attrs[k])) attrs[k] = attrs[k].join(',');
        else attrs[k] = String(attrs[k]);
      }
      attrError.textContent = '';
    } catch (err) {
      attrs = {};
      attrError.textContent = errorText(err);
    }
    renderAttrs();
  }

  function setEditing(on) {
    editing = on;
    edit.hidden = on;
    save.hidden = cancel.hidden = !on;
    attrError.textContent = '';
    renderAttrs();
    if (on) {
      const first = attrBody.querySelector('input');
      if (first) first.focus();
    }
  }

  /** The attributes whose inputs differ from what was read: the body of PUT /nodes/{node}. */
  function changed() {
    const out = {};
    for (const input of attrBody.querySelectorAll('input[data-original]')) {
      if (input.value !== input.dataset.original) out[input.name] = input.value;
    }
    const nk = attrBody.querySelector('input.new-name');
    const nv = attrBody.querySelector('input.new-value');
    if (nk && nk.value.trim()) out[nk.value.trim()] = nv.value;
    return out;
  }

  edit.addEventListener('click', () => {
    attrNote.textContent = '';
    setEditing(true);
  });
  cancel.addEventListener('click', () => {
    setEditing(false);
    if (staleWhileEditing) {
      staleWhileEditing = false;
      loadAttrs();
    }
  });
  attrForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!editing) return;
    const body = changed();
    const n = Object.keys(body).length;
    if (!n) {
      attrNote.textContent = 'Nothing changed.';
      setEditing(false);
      return;
    }
    save.disabled = true;
    attrError.textContent = '';
    try {
      await api.request('PUT', `/nodes/${api.nr(name)}`, body);
    } catch (err) {
      // the API changed nothing: the inputs keep what the user typed, to correct it
      attrError.textContent = errorText(err);
      save.disabled = false;
      return;
    }
    save.disabled = false;
    staleWhileEditing = false;
    editing = false;
    edit.hidden = false;
    save.hidden = cancel.hidden = true;
    attrNote.textContent = `Saved ${n === 1 ? '1 attribute' : `${n} attributes`}: ${Object.keys(body).sort().join(', ')}.`;
    await loadAttrs();
  });

  // the node's changes (by anyone) and power events
  stops.push(
    api.events(`types=node,power&noderange=${encodeURIComponent(name)}`, (ev, data) => {
      if (ev === 'power' && data.node === name) setPower(data.power, false);
      else if (ev === 'changes' && (data.changes || []).some((c) => c.name === name)) {
        if (editing) {
          staleWhileEditing = true;
          attrNote.textContent = 'The node changed since you began editing; Cancel edit shows the new values.';
        } else loadAttrs();
      } else if (ev === 'reset' && !editing) loadAttrs();
    }),
  );

  select('attributes', false);
  loadAttrs();

  return () => {
    for (const s of stops) s();
  };
}
