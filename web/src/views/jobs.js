// The jobs view (docs/web.md "Nodeshell, jobs and consoles"): the caller's jobs (GET /jobs; root
// sees everyone's), kept live by the job events (created, progress, ended), with Cancel on a
// running job (DELETE /jobs/{id}) and the job's nodes (GET /jobs/{id}) when a row is opened.
import * as api from '../api.js';

const columns = ['ID', 'User', 'Operation', 'State', 'Targets', 'Finished', 'Failed', 'Created', 'Ended'];
const running = (s) => s === 'running' || s === 'queued';

function time(ms) {
  const n = Number(ms);
  if (!n) return '';
  const d = new Date(n);
  return d.toLocaleString(undefined, { hour12: false });
}

function cell(tag, text, attrs = {}) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/** One node's answer in a line: its output or power/boot value, and its error. */
function nodeSummary(n) {
  const skip = new Set(['node', 'rc', 'stdout', 'stderr', 'error', 'message', 'truncated']);
  const parts = [];
  for (const [k, v] of Object.entries(n)) if (!skip.has(k)) parts.push(`${k}: ${v}`);
  const out = [...(n.stdout || []), ...(n.stderr || [])];
  return [...parts, ...out].join('\n');
}

export function mount(root) {
  root.innerHTML = `
    <h1>Jobs</h1>
    <p class="error" role="alert"></p>
    <div class="jobs-wrap">
      <table class="jobs">
        <caption>Jobs, newest first</caption>
        <thead><tr></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <section class="job-detail" hidden aria-labelledby="job-detail-title">
      <h2 id="job-detail-title"></h2>
      <p class="job-messages"></p>
      <table class="job-nodes">
        <thead><tr><th scope="col">Node</th><th scope="col">rc</th><th scope="col">Result</th><th scope="col">Error</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>`;
  const error = root.querySelector('.error');
  const head = root.querySelector('.jobs thead tr');
  for (const c of [...columns, '']) head.append(cell('th', c, { scope: 'col' }));
  const body = root.querySelector('.jobs tbody');
  const detail = root.querySelector('.job-detail');
  const jobs = new Map(); // id -> job
  const rows = new Map(); // id -> tr
  let open = null; // the id whose nodes are shown
  let gone = false;

  function fill(tr, j) {
    const values = [j.id, j.user, j.operation, j.state, j.targets, j.finished, j.failed, time(j.created), time(j.ended)];
    tr.replaceChildren();
    values.forEach((v, i) => {
      if (i === 0) {
        const th = cell('th', undefined, { scope: 'row' });
        const b = cell('button', String(v), { type: 'button', class: 'link', 'aria-label': `Open job ${v}` });
        th.append(b); // its click reaches the row's handler

        tr.append(th);
      } else tr.append(cell('td', v === undefined ? '' : String(v), i === 3 ? { class: `state-${j.state}` } : {}));
    });
    const td = cell('td');
    if (running(j.state)) {
      const b = cell('button', 'Cancel', { type: 'button', 'aria-label': `Cancel job ${j.id}` });
      b.addEventListener('click', async (e) => {
        e.stopPropagation();
        b.disabled = true;
        try {
          const r = await api.request('DELETE', `/jobs/${encodeURIComponent(j.id)}`);
          if (r && r.id) {
            const { nodes, ...job } = r; // the row keeps the summary; the nodes are the panel's
            update(job);
          }
        } catch (err) {
          error.textContent = err.message;
          b.disabled = false;
        }
      });
      td.append(b);
    }
    tr.append(td);
    tr.dataset.job = j.id;
    tr.classList.toggle('selected', open === j.id);
  }

  function update(j) {
    const old = jobs.get(j.id) || {};
    const merged = { ...old, ...j };
    jobs.set(j.id, merged);
    let tr = rows.get(j.id);
    if (!tr) {
      tr = document.createElement('tr');
      tr.addEventListener('click', () => openJob(merged.id));
      rows.set(j.id, tr);
      body.prepend(tr); // newest first
    }
    fill(tr, merged);
    if (open === j.id && j.event !== undefined) refreshDetail();
  }

  async function load() {
    try {
      const r = await api.request('GET', '/jobs');
      if (gone) return;
      for (const j of r.jobs || []) update(j);
    } catch (err) {
      if (!gone) error.textContent = err.message;
    }
  }

  let detailTimer = 0;
  function refreshDetail() {
    if (detailTimer) return;
    detailTimer = setTimeout(() => {
      detailTimer = 0;
      if (open) openJob(open);
    }, 250);
  }

  async function openJob(id) {
    open = id;
    for (const [k, tr] of rows) tr.classList.toggle('selected', k === id);
    try {
      const j = await api.request('GET', `/jobs/${encodeURIComponent(id)}`);
      if (gone || open !== id) return;
      detail.hidden = false;
      root.querySelector('#job-detail-title').textContent =
        `Job ${j.id}: ${j.operation}, ${j.state}, ${j.finished} of ${j.targets} done, ${j.failed} failed`;
      const msgs = j.messages || [];
      root.querySelector('.job-messages').textContent = Array.isArray(msgs) ? msgs.join('\n') : String(msgs);
      const tb = detail.querySelector('tbody');
      tb.replaceChildren(
        ...(j.nodes || []).map((n) => {
          const tr = document.createElement('tr');
          tr.append(cell('th', n.node, { scope: 'row' }));
          tr.append(cell('td', n.rc === undefined ? '' : String(n.rc)));
          tr.append(cell('td', nodeSummary(n), { class: 'pre' }));
          tr.append(cell('td', [n.error, n.message].filter(Boolean).join(': ')));
          return tr;
        }),
      );
    } catch (err) {
      if (!gone) error.textContent = err.message;
    }
  }

  const stop = api.events('types=job', (name, d) => {
    if (name !== 'job' || !d || !d.job) return;
    const j = { id: d.job, event: d.event };
    for (const k of ['user', 'operation', 'state', 'targets', 'finished', 'failed']) if (d[k] !== undefined) j[k] = d[k];
    if (d.event === 'created' && !jobs.has(d.job)) j.created = Date.now();
    if (d.event === 'ended') j.ended = jobs.get(d.job)?.ended || Date.now();
    update(j);
  });
  load();

  return () => {
    gone = true;
    stop();
    if (detailTimer) clearTimeout(detailTimer);
  };
}
