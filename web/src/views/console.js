// The console view (docs/web.md "Nodeshell, jobs and consoles"): a node's live console in
// xterm.js over the console WebSocket (docs/api.md "GET /nodes/{node}/console (WebSocket)"),
// authenticated by the session cookie (never credentials in the URL). The replay of recent
// output comes first; typing goes to the node while this page holds the writer; Watch read-only
// and Take over re-attach the same socket (text frames `ro` and `force`); the console log
// (GET /nodes/{node}/console/log?tail=N) is in a panel below.
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import * as api from '../api.js';
import * as csp from '../term/csp.js';

const REPLAY = 16384; // bytes of the replay buffer asked for (the daemon caps it)
const LOG_TAIL = 200;

export function mount(root, params) {
  const node = (params && params[0]) || '';
  root.innerHTML = `
    <h1 class="console-title"></h1>
    <div class="console-bar">
      <span class="console-state" role="status" aria-live="polite"></span>
      <button type="button" name="ro">Watch read-only</button>
      <button type="button" name="force">Take over</button>
      <button type="button" name="break">Send break</button>
      <button type="button" name="reconnect" hidden>Reconnect</button>
    </div>
    <p class="error" role="alert"></p>
    <div class="console-term" aria-label="Console"></div>
    <section class="console-log" aria-labelledby="console-log-title">
      <h2 id="console-log-title">Console log</h2>
      <div class="console-log-bar">
        <label>Last lines <input name="tail" type="number" min="0" max="1000000" value="${LOG_TAIL}"></label>
        <button type="button" name="log">Refresh log</button>
      </div>
      <pre class="console-log-text" tabindex="0" aria-label="Console log text"></pre>
    </section>`;
  root.querySelector('.console-title').textContent = `Console of ${node}`;
  const state = root.querySelector('.console-state');
  const error = root.querySelector('.error');
  const btn = (n) => root.querySelector(`button[name=${n}]`);
  const logText = root.querySelector('.console-log-text');
  const tailInput = root.querySelector('input[name=tail]');
  if (!node) {
    error.textContent = 'No node: open a console as #/console/<node>.';
    return () => {};
  }

  csp.install();
  const term = new Terminal({
    convertEol: false,
    cursorBlink: true,
    scrollback: 5000,
    fontFamily: 'ui-monospace, monospace',
    fontSize: 14,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(root.querySelector('.console-term'));
  try {
    fit.fit();
  } catch {}
  const onResize = () => {
    try {
      fit.fit();
    } catch {}
  };
  window.addEventListener('resize', onResize);

  let ws = null;
  let mode = ''; // "rw" or "ro" once attached
  let holder = '';
  let gone = false;
  const encoder = new TextEncoder();

  function show() {
    let s = mode === 'rw' ? 'Attached read-write' : mode === 'ro' ? 'Watching read-only' : 'Not attached';
    if (mode === 'ro' && holder) s += `: ${holder} has the console`;
    state.textContent = s;
    btn('ro').disabled = !ws || mode === 'ro';
    btn('break').disabled = !ws || mode !== 'rw';
  }

  function connect(query) {
    error.textContent = '';
    btn('reconnect').hidden = true;
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}${api.base}/nodes/${encodeURIComponent(node)}/console?replay=${REPLAY}${query || ''}`;
    const sock = new WebSocket(url);
    sock.binaryType = 'arraybuffer';
    ws = sock;
    sock.addEventListener('message', (e) => {
      if (typeof e.data !== 'string') {
        term.write(new Uint8Array(e.data));
        return;
      }
      let m;
      try {
        m = JSON.parse(e.data);
      } catch {
        return;
      }
      if (m.attached) {
        mode = m.attached;
        holder = m.holder || '';
        if (m.bumped) term.write(`\r\n[took the console from ${m.bumped}]\r\n`);
      } else if (m.notice) {
        if (m.holder !== undefined) holder = m.holder;
        if (m.notice === 'takenover') mode = 'ro';
        if (m.notice === 'writer') mode = 'rw';
        const text = m.text || m.notice;
        term.write(`\r\n[${text}]\r\n`);
      } else if (m.detached) {
        term.write(`\r\n[detached: ${m.detached}]\r\n`);
      } else if (m.error) {
        error.textContent = m.error;
      }
      show();
    });
    sock.addEventListener('close', (e) => {
      if (ws !== sock || gone) return;
      ws = null;
      mode = '';
      show();
      state.textContent = `Closed${e.reason ? ': ' + e.reason : ''}`;
      btn('reconnect').hidden = false;
    });
    sock.addEventListener('error', () => {
      if (ws === sock && !gone) error.textContent = 'The console connection failed (see the console log below, or your rcons policy).';
    });
    show();
  }

  term.onData((d) => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    if (mode !== 'rw') {
      state.textContent = `Read-only${holder ? ': ' + holder + ' has the console' : ''}; Take over to type`;
      return;
    }
    ws.send(encoder.encode(d)); // keystrokes are binary frames
  });

  btn('ro').addEventListener('click', () => ws && ws.send('ro'));
  btn('force').addEventListener('click', () => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send('force');
    else connect('&force=1');
    term.focus();
  });
  btn('break').addEventListener('click', () => ws && ws.send('break'));
  btn('reconnect').addEventListener('click', () => connect(''));

  async function loadLog() {
    const n = Number(tailInput.value) || LOG_TAIL;
    try {
      const r = await fetch(`${api.base}/nodes/${encodeURIComponent(node)}/console/log?tail=${n}`, {
        credentials: 'same-origin',
      });
      const text = await r.text();
      if (gone) return;
      if (!r.ok) {
        let msg = text;
        try {
          msg = JSON.parse(text).error || text;
        } catch {}
        logText.textContent = `(${msg})`;
        return;
      }
      logText.textContent = text;
      logText.scrollTop = logText.scrollHeight;
    } catch (err) {
      if (!gone) logText.textContent = `(${err.message})`;
    }
  }
  btn('log').addEventListener('click', loadLog);

  connect('');
  loadLog();
  term.focus();

  return () => {
    gone = true;
    window.removeEventListener('resize', onResize);
    if (ws) ws.close(1000);
    term.dispose();
    csp.prune();
  };
}
