// The nodeshell view (docs/web.md "Nodeshell, jobs and consoles"): runs a command on a noderange
// as a job (POST /nodes/{nr}/nodeshell?async=1), follows the job's NDJSON stream so each node's
// answer shows as it comes, and folds the answers as xCAT's xcoll does: nodes with identical
// output under one header in noderange shorthand ("cn[01-04],cn07"), failed nodes apart.
// Node output is only ever inserted as text (textContent), never as HTML.
import * as api from '../api.js';
import { foldNames } from '../noderange.js';

/** Natural order: "cn2" before "cn10". */
const collator = new Intl.Collator('en', { numeric: true });
export const natural = (a, b) => collator.compare(a, b);

/** A node's answer failed: a non-zero exit status or an error (refused, timeout, cancelled). */
export function failed(r) {
  return (r.rc !== undefined && Number(r.rc) !== 0) || !!r.error;
}

/** The text of one node's answer, as xcoll would compare it. */
function outputText(r) {
  const lines = [...(r.stdout || [])];
  for (const l of r.stderr || []) lines.push(l);
  return lines.join('\n');
}

function errorText(r) {
  const lines = [];
  if (r.error || r.message) lines.push(`${r.error || 'error'}: ${r.message || ''}`.trim());
  if (!r.error && r.rc !== undefined && Number(r.rc) !== 0) lines.push(`exit status ${r.rc}`);
  for (const l of r.stdout || []) lines.push(l);
  for (const l of r.stderr || []) lines.push(l);
  return lines.join('\n');
}

/** Groups answers by identical text: [{names, text}] in the order of their first node. */
function group(results, textOf) {
  const groups = new Map();
  for (const r of results) {
    const t = textOf(r);
    if (!groups.has(t)) groups.set(t, []);
    groups.get(t).push(r.node);
  }
  const out = [...groups].map(([text, names]) => ({ names: names.sort(natural), text }));
  out.sort((a, b) => natural(a.names[0], b.names[0]));
  return out;
}

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function section(title, g, cls) {
  const s = el('section', { class: `fold ${cls}` });
  const h = el('h3', {});
  h.append(el('span', { class: 'fold-range' }, foldNames(g.names)));
  h.append(el('span', { class: 'fold-count' }, ` (${g.names.length} node${g.names.length === 1 ? '' : 's'})`));
  s.append(h);
  s.append(el('pre', {}, g.text === '' ? '(no output)' : g.text));
  s.setAttribute('aria-label', `${title} ${foldNames(g.names)}`);
  return s;
}

export function mount(root, params) {
  root.innerHTML = `
    <h1>Nodeshell</h1>
    <form class="shell-form">
      <label>Noderange <input name="noderange" required autocomplete="off" spellcheck="false"></label>
      <label class="shell-cmd">Command <input name="command" required autocomplete="off" spellcheck="false"></label>
      <button type="submit" name="run">Run</button>
      <button type="button" name="cancel" hidden>Cancel</button>
    </form>
    <p class="error" role="alert"></p>
    <p class="shell-progress" role="status" aria-live="polite"></p>
    <div class="shell-out" aria-label="Output">
      <div class="shell-ok"></div>
      <div class="shell-failed"></div>
    </div>`;
  const form = root.querySelector('form');
  const runBtn = form.querySelector('[name=run]');
  const cancelBtn = form.querySelector('[name=cancel]');
  const error = root.querySelector('.error');
  const progress = root.querySelector('.shell-progress');
  const okBox = root.querySelector('.shell-ok');
  const failedBox = root.querySelector('.shell-failed');
  if (params && params[0]) form.noderange.value = params[0];
  (params && params[0] ? form.command : form.noderange).focus();

  let job = null; // {id, targets, results: [], done, abort}
  let frame = 0;
  let gone = false;

  function render() {
    frame = 0;
    if (!job) return;
    const ok = job.results.filter((r) => !failed(r));
    const bad = job.results.filter(failed);
    const total = job.targets || job.results.length;
    let p = `${job.results.length} of ${total} done, ${bad.length} failed`;
    if (job.state) p += ` (${job.state})`;
    progress.textContent = p;
    okBox.replaceChildren(...group(ok, outputText).map((g) => section('Output of', g, 'fold-ok')));
    const failedGroups = group(bad, errorText);
    if (failedGroups.length) {
      failedBox.replaceChildren(
        el('h2', {}, `Failed (${bad.length})`),
        ...failedGroups.map((g) => section('Failed', g, 'fold-bad')),
      );
    } else failedBox.replaceChildren();
  }
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(render);
  };

  async function follow(j) {
    const r = await fetch(`${api.base}/jobs/${encodeURIComponent(j.id)}?stream=1`, {
      credentials: 'same-origin',
      headers: { Accept: 'application/x-ndjson' },
      signal: j.abort.signal,
    });
    if (!r.ok) {
      let msg = `HTTP ${r.status}`;
      try {
        msg = (await r.json()).error || msg;
      } catch {}
      throw new Error(msg);
    }
    await api.readLines(r, (o) => {
      if (o.done !== undefined) {
        j.done = true;
        if (o.nodes !== undefined) j.targets = Number(o.nodes);
      } else if (o.node !== undefined) j.results.push(o);
      schedule();
    });
  }

  async function finish(j) {
    // The job's final state (done, cancelled, ...) for the progress line.
    try {
      const s = await api.request('GET', `/jobs/${encodeURIComponent(j.id)}`);
      j.state = s.state;
    } catch {}
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (job && !job.done) return;
    job = null; // the last job's answers go with the new run
    error.textContent = '';
    progress.textContent = '';
    okBox.replaceChildren();
    failedBox.replaceChildren();
    const range = form.noderange.value.trim();
    runBtn.disabled = true;
    let j = null;
    try {
      const a = await api.request('POST', `/nodes/${api.nr(range)}/nodeshell?async=1`, {
        command: form.command.value,
      });
      j = job = { id: a.job, targets: 0, results: [], done: false, abort: new AbortController() };
      progress.textContent = 'Started';
      cancelBtn.hidden = false;
      cancelBtn.disabled = false;
      try {
        const s = await api.request('GET', `/jobs/${encodeURIComponent(j.id)}`);
        j.targets = Number(s.targets) || 0;
      } catch {}
      schedule();
      await follow(j);
      await finish(j);
    } catch (err) {
      if (gone) return;
      error.textContent = Array.isArray(err.body?.error) ? err.body.error.join('\n') : err.message;
    } finally {
      if (!gone) {
        if (j) j.done = true;
        runBtn.disabled = false;
        cancelBtn.hidden = true;
        schedule();
      }
    }
  });

  cancelBtn.addEventListener('click', async () => {
    if (!job || job.done) return;
    cancelBtn.disabled = true;
    try {
      await api.request('DELETE', `/jobs/${encodeURIComponent(job.id)}`);
    } catch (err) {
      error.textContent = err.message;
      cancelBtn.disabled = false;
    }
  });

  return () => {
    gone = true;
    if (frame) cancelAnimationFrame(frame);
    if (job) job.abort.abort();
  };
}
