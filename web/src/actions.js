// The action bar: power, next boot, beacon and nodestat on a selection of nodes, with the per-node
// results folded as xcoll folds them (docs/web.md, "Actions and the node page").
//
// Contract for the views that mount it (nodes.js above the node table, node.js for one node):
//
//   const unmount = mountActions(el, getSelectedNodes, options)
//
// - `getSelectedNodes()` is called when a button is pressed and returns
//   `{range: string, count: number}`: `range` is a noderange naming the selection in xCAT's
//   grammar, a comma list of node names ("cn01,cn07") or, when the user picked "all matching",
//   the table's filter noderange itself ("rack3,-cn0[1-4]"); `count` is how many nodes it
//   names (the confirm dialog and the progress show it). `{range: '', count: 0}`: nothing is
//   selected (the bar says so and sends nothing).
// - `options.onResult(node, {action, value, failed, text})` (optional) is called for each
//   node's result as it arrives; `action` is the result's key (power, nextboot, beacon,
//   nodestat). The node page keeps its power line current with it, the node table its
//   nodestat column.
// - The returned function stops following a running job (the job itself runs on: the jobs
//   view shows it) and removes the bar.
//
// Every action is one REST call with `async=1` (docs/api.md, "Jobs: async=1"): the daemon
// answers 202 {"job": id} once the nodes are planned, and the bar follows
// `GET /jobs/{id}?stream=1` (NDJSON, a line per node as it ends, then the summary). A call
// refused as a whole (a bad noderange, policy, too many nodes in flight) shows the API's
// message. Power off and reset of more than one node ask first, with the count.
import * as api from './api.js';
import { foldNames } from './noderange.js';

/** What each button does: its REST call and the key of the value in a node's result. */
const ACTIONS = {
  'power-on': { label: 'Power on', method: 'PUT', res: 'power', body: { action: 'on' } },
  'power-off': { label: 'Power off', method: 'PUT', res: 'power', body: { action: 'off' }, confirm: true },
  'power-reset': { label: 'Power reset', method: 'PUT', res: 'power', body: { action: 'reset' }, confirm: true },
  'power-stat': { label: 'Power status', method: 'GET', res: 'power' },
  'beacon-on': { label: 'Beacon on', method: 'PUT', res: 'beacon', body: { action: 'on' } },
  'beacon-off': { label: 'Beacon off', method: 'PUT', res: 'beacon', body: { action: 'off' } },
  // nodestat's probe of each node (ping, sshd, the nodestat_ports applications): reads only
  nodestat: { label: 'Node status', method: 'GET', res: 'nodestat' },
};

/** PUT /nodes/{nr}/nextboot's orders (docs/api.md); stat reads it. */
const NEXTBOOT = [
  ['net', 'Network (net)'],
  ['hd', 'Hard disk (hd)'],
  ['cd', 'CD/DVD (cd)'],
  ['def', 'BIOS default (def)'],
  ['stat', 'Show current (stat)'],
];

/** The API's words for a refused call: its message, or each line of its list. */
export function errorText(err) {
  const e = err && err.body && err.body.error;
  if (Array.isArray(e)) return e.join('\n');
  return (err && err.message) || String(err);
}

/**
 * One node's line of a job stream as {node, failed, text}: the API's message for a failed node
 * (its code when it has no message), else the value under the action's key (power, nextboot,
 * beacon) or, in nodeshell's detail shape, its output lines.
 */
export function nodeResult(line, key) {
  if (line.error) {
    return { node: line.node, failed: true, text: line.message || line.error };
  }
  let v = line[key];
  if (v === undefined && Array.isArray(line.stdout)) {
    v = line.stdout.concat(line.stderr || []).join('\n');
  }
  if (Array.isArray(v)) v = v.join('\n');
  else if (v && typeof v === 'object') v = JSON.stringify(v);
  const failed = typeof line.rc === 'number' && line.rc !== 0;
  return { node: line.node, failed, text: v === undefined || v === '' ? `rc ${line.rc}` : String(v) };
}

function button(label, id) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.dataset.action = id;
  return b;
}

export function mountActions(el, getSelectedNodes, options = {}) {
  const root = document.createElement('section');
  root.className = 'actions';
  root.setAttribute('aria-label', 'Actions');

  const bar = document.createElement('div');
  bar.className = 'actions-bar';
  bar.setAttribute('role', 'toolbar');
  bar.setAttribute('aria-label', 'Node actions');
  const power = document.createElement('span');
  power.className = 'actions-group';
  for (const id of ['power-on', 'power-off', 'power-reset', 'power-stat']) {
    power.append(button(ACTIONS[id].label, id));
  }
  const boot = document.createElement('span');
  boot.className = 'actions-group';
  const bootLabel = document.createElement('label');
  bootLabel.textContent = 'Next boot ';
  const order = document.createElement('select');
  for (const [value, text] of NEXTBOOT) order.append(new Option(text, value));
  bootLabel.append(order);
  boot.append(bootLabel, button('Set next boot', 'nextboot'));
  const beacon = document.createElement('span');
  beacon.className = 'actions-group';
  beacon.append(button(ACTIONS['beacon-on'].label, 'beacon-on'), button(ACTIONS['beacon-off'].label, 'beacon-off'));
  const probe = document.createElement('span');
  probe.className = 'actions-group';
  probe.append(button(ACTIONS.nodestat.label, 'nodestat'));
  bar.append(power, boot, beacon, probe);

  // the confirm step: a modal dialog naming the action and the count
  const dialog = document.createElement('dialog');
  dialog.className = 'actions-confirm';
  dialog.setAttribute('aria-labelledby', 'actions-confirm-text');
  const question = document.createElement('p');
  question.id = 'actions-confirm-text';
  const yes = button('', 'confirm');
  const no = button('Cancel', 'cancel');
  const buttons = document.createElement('div');
  buttons.className = 'actions-confirm-buttons';
  buttons.append(yes, no);
  dialog.append(question, buttons);

  // the result panel: a heading with the progress, the refusal (if any), the folded results
  const panel = document.createElement('section');
  panel.className = 'actions-results';
  panel.setAttribute('aria-label', 'Results');
  panel.hidden = true;
  const head = document.createElement('div');
  head.className = 'actions-results-head';
  const title = document.createElement('h2');
  title.className = 'actions-results-title';
  const progress = document.createElement('span');
  progress.className = 'actions-progress';
  progress.setAttribute('role', 'status');
  const stop = button('Cancel job', 'cancel-job');
  stop.hidden = true;
  const close = button('Close results', 'close');
  head.append(title, progress, stop, close);
  const refusal = document.createElement('p');
  refusal.className = 'error';
  refusal.setAttribute('role', 'alert');
  const list = document.createElement('ul');
  list.className = 'actions-list';
  panel.append(head, refusal, list);

  root.append(bar, dialog, panel);
  el.append(root);

  let run = null; // {abort, job, groups: Map(key -> {failed, text, nodes[]}), seen, total}
  let drawPending = false;

  function draw() {
    drawPending = false;
    if (!run) return;
    const groups = [...run.groups.values()].map((g) => ({ ...g, folded: foldNames(g.nodes) }));
    groups.sort((a, b) => (a.failed !== b.failed ? (a.failed ? -1 : 1) : a.folded < b.folded ? -1 : 1));
    const items = groups.map((g) => {
      const li = document.createElement('li');
      if (g.failed) li.className = 'bad';
      const who = document.createElement('span');
      who.className = 'actions-nodes';
      who.textContent = g.folded;
      const what = document.createElement('span');
      what.className = 'actions-value';
      what.textContent = g.text;
      li.append(who, ': ', what);
      return li;
    });
    list.replaceChildren(...items);
    const total = run.total ? ` of ${run.total}` : '';
    const failed = run.failed ? `, ${run.failed} failed` : '';
    progress.textContent = run.done
      ? `${run.seen}${total} answered${failed}${run.ended ? ` (${run.ended})` : ''}`
      : `${run.seen}${total} answered${failed}…`;
  }
  function schedule() {
    if (!drawPending) {
      drawPending = true;
      requestAnimationFrame(draw);
    }
  }

  function add(r, action) {
    const key = `${r.failed ? 1 : 0}\u0000${r.text}`;
    if (!run.groups.has(key)) run.groups.set(key, { failed: r.failed, text: r.text, nodes: [] });
    run.groups.get(key).nodes.push(r.node);
    ++run.seen;
    if (r.failed) ++run.failed;
    if (options.onResult) {
      try {
        options.onResult(r.node, { action, value: r.failed ? undefined : r.text, failed: r.failed, text: r.text });
      } catch (e) {
        console.warn(e);
      }
    }
    schedule();
  }

  async function start(label, method, path, body, key, sel) {
    if (run) run.abort.abort();
    const abort = new AbortController();
    run = { abort, job: null, groups: new Map(), seen: 0, failed: 0, total: sel.count, done: false };
    const mine = run;
    panel.hidden = false;
    title.textContent = `${label}: ${sel.range}`;
    refusal.textContent = '';
    list.replaceChildren();
    progress.textContent = 'Starting…';
    stop.hidden = true;
    let res;
    try {
      res = await api.request(method, `${path}${path.includes('?') ? '&' : '?'}async=1`, body);
    } catch (err) {
      if (run !== mine) return;
      refusal.textContent = errorText(err);
      progress.textContent = 'Refused';
      run.done = true;
      return;
    }
    if (run !== mine) return;
    run.job = res && res.job;
    stop.hidden = false;
    stop.disabled = false;
    progress.textContent = `0 of ${run.total} answered…`;
    try {
      const r = await fetch(`${api.base}/jobs/${encodeURIComponent(run.job)}?stream=1`, {
        credentials: 'same-origin',
        headers: { Accept: 'application/x-ndjson' },
        signal: abort.signal,
      });
      if (!r.ok) {
        let b = null;
        try {
          b = await r.json();
        } catch {}
        throw new api.ApiError(r.status, b);
      }
      await api.readLines(r, (line) => {
        if (run !== mine) return;
        if (line.done !== undefined) {
          if (typeof line.nodes === 'number') run.total = line.nodes;
          if (line.error) refusal.textContent = Array.isArray(line.error) ? line.error.join('\n') : line.error;
          return;
        }
        if (line.node) add(nodeResult(line, key), key);
      });
    } catch (err) {
      if (err.name === 'AbortError' || run !== mine) return;
      refusal.textContent = errorText(err);
    }
    if (run !== mine) return;
    run.done = true;
    stop.hidden = true;
    draw();
  }

  let pending = null; // the action waiting for the dialog's answer

  function act(id) {
    const sel = getSelectedNodes() || { range: '', count: 0 };
    if (!sel.range || !sel.count) {
      panel.hidden = false;
      title.textContent = 'No nodes selected';
      progress.textContent = '';
      refusal.textContent = 'Select one or more nodes first.';
      list.replaceChildren();
      return;
    }
    const base = `/nodes/${api.nr(sel.range)}`;
    if (id === 'nextboot') {
      const o = order.value;
      const label = o === 'stat' ? 'Next boot' : `Next boot ${o}`;
      if (o === 'stat') start(label, 'GET', `${base}/nextboot`, undefined, 'nextboot', sel);
      else start(label, 'PUT', `${base}/nextboot`, { order: o }, 'nextboot', sel);
      return;
    }
    const a = ACTIONS[id];
    const path = `${base}/${a.res}`;
    const go = () => start(a.label, a.method, path, a.body, a.res, sel);
    if (a.confirm && sel.count > 1) {
      const n = sel.count.toLocaleString('en-US');
      question.textContent = `${a.label}: ${n} nodes (${sel.range})?`;
      yes.textContent = `${a.label} ${n} nodes`;
      pending = go;
      dialog.showModal();
      no.focus();
      return;
    }
    go();
  }

  bar.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-action]');
    if (b) act(b.dataset.action);
  });
  yes.addEventListener('click', () => {
    const go = pending;
    pending = null;
    dialog.close();
    if (go) go();
  });
  no.addEventListener('click', () => {
    pending = null;
    dialog.close();
  });
  dialog.addEventListener('close', () => {
    pending = null;
  });
  stop.addEventListener('click', async () => {
    if (!run || !run.job) return;
    stop.disabled = true;
    try {
      await api.request('DELETE', `/jobs/${encodeURIComponent(run.job)}`);
      run.ended = 'cancelled';
    } catch (err) {
      refusal.textContent = errorText(err);
    }
  });
  close.addEventListener('click', () => {
    panel.hidden = true;
  });

  return () => {
    if (run) run.abort.abort();
    run = null;
    root.remove();
  };
}
