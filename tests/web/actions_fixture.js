// The browser test's stand-in for the node table (tests/web/nodeops.mjs): a page at the daemon's
// origin that mounts web/src/actions.js over the nodes of a noderange typed in a box, so that the
// bar's many-node behaviour (confirm with the count, results folded as xcoll, errors per node)
// is tested against the real daemon without the table. The test bundles it with esbuild.
import * as api from '../../web/src/api.js';
import { mountActions } from '../../web/src/actions.js';

await api.session(); // the session's CSRF token for the bar's writes
const main = document.getElementById('main');
const label = document.createElement('label');
label.textContent = 'Selection ';
const box = document.createElement('input');
box.setAttribute('aria-label', 'Selection noderange');
label.append(box);
const count = document.createElement('output');
count.setAttribute('aria-label', 'Selected nodes');
count.textContent = '0';
main.append(label, count);
let n = 0;
box.addEventListener('change', async () => {
  try {
    const names = box.value ? await api.request('GET', `/nodes/${api.nr(box.value)}/nodels`) : [];
    n = (names || []).length;
  } catch {
    n = box.value.split(',').length; // a bad noderange: the bar's call shows the API's message
  }
  count.textContent = String(n);
});
const bar = document.createElement('div');
main.append(bar);
mountActions(bar, () => ({ range: box.value, count: n }));
document.body.dataset.ready = '1';
