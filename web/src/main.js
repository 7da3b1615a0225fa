// The web console's shell: the session gate, the navigation and a hash router. Each view is a
// module with `mount(element, params)` returning a function that unmounts it (docs/web.md).
import * as api from './api.js';
import * as login from './views/login.js';
import * as nodes from './views/nodes.js';
import * as node from './views/node.js';
import * as shell from './views/shell.js';
import * as jobs from './views/jobs.js';
import * as consoleView from './views/console.js';

// '#/nodes', '#/node/cn01', '#/shell', '#/jobs', '#/console/cn01'
const routes = {
  nodes: nodes,
  node: node,
  shell: shell,
  jobs: jobs,
  console: consoleView,
};

const main = document.getElementById('main');
let unmount = null;
let current = null;

function parse() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  const name = routes[parts[0]] ? parts[0] : 'nodes';
  return { name, params: parts.slice(1).map(decodeURIComponent) };
}

function show(view, params) {
  if (unmount) unmount();
  main.replaceChildren();
  unmount = view.mount(main, params) || null;
}

function route() {
  if (!current) return;
  const { name, params } = parse();
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === `#/${name}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  show(routes[name], params);
}

function loggedIn(s) {
  current = s;
  document.getElementById('who').textContent = s.user;
  document.getElementById('nav').hidden = false;
  document.getElementById('logout').hidden = false;
  route();
}

function loggedOut() {
  current = null;
  document.getElementById('who').textContent = '';
  document.getElementById('nav').hidden = true;
  document.getElementById('logout').hidden = true;
  show(login, [loggedIn]);
}

/** Shows a short message in the status line (read by screen readers). */
export function status(text) {
  document.getElementById('status').textContent = text;
}

document.getElementById('logout').addEventListener('click', async () => {
  try {
    await api.logout();
  } finally {
    loggedOut();
  }
});
window.addEventListener('hashchange', route);
api.setUnauthorizedHandler(() => {
  if (current) loggedOut();
});

const s = await api.session();
if (s) loggedIn(s);
else loggedOut();
