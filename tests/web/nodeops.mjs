// The browser test of the action bar (web/src/actions.js) and the node page (web/src/views/
// node.js) against a real daemon whose nodes have ipmi_sim BMCs (tests/web/nodeops_test.cpp
// sets them up): power a selection off and on and see each node's result folded as xcoll, the
// confirm step, a BMC that does not answer shown with the API's words, the node page's power
// line, next boot, beacon, vitals, inventory, event log, an attribute edited and saved (checked
// through the API) and a bad value refused with the API's message (nothing changed).
//
// Env (besides the harness's CWS_URL, CWS_USER, CWS_PASSWORD, CWS_SHOTS):
//   NODEOPS_GROUP  the group of every node with a BMC, a dead one included ("ops")
//   NODEOPS_LIVE   the nodes whose BMC answers, comma list ("op01,op02,op03")
//   NODEOPS_DEAD   the node whose BMC does not answer ("opdead")
//   NODEOPS_FOLD   the live nodes as the result panel folds them ("op[01-03]")
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open, login, shot, check, finish, run } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const env = process.env;
const url = env.CWS_URL;
const group = env.NODEOPS_GROUP || 'ops';
const live = (env.NODEOPS_LIVE || 'op01,op02,op03').split(',');
const dead = env.NODEOPS_DEAD || 'opdead';
const fold = env.NODEOPS_FOLD || 'op[01-03]';
const first = live[0];
const T = 20000; // a generous bound for one BMC round of the whole selection

await run(async () => {
  const { browser, page } = await open();
  // the API as another client sees it (HTTP Basic, not the page's session)
  const basic = 'Basic ' + Buffer.from(`${env.CWS_USER}:${env.CWS_PASSWORD}`).toString('base64');
  const api = async (method, path, body) => {
    const headers = { Authorization: basic };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const r = await page.request.fetch(`${url}/clusterws${path}`, {
      method,
      headers,
      data: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status(), body: text ? JSON.parse(text) : null };
  };
  const step = (s) => console.log(`nodeops: ${s}`);

  try {
    await login(page, env.CWS_USER, env.CWS_PASSWORD);
    await page.getByRole('button', { name: 'Log out', exact: true }).waitFor();

    // ---- the bar over many nodes, on a page standing in for the node table -------------------
    // The fixture is bundled here and served at the daemon's origin with the daemon's own CSP.
    step('actions on a selection of many nodes');
    const esm = await import(join(repo, 'web', 'node_modules', 'esbuild', 'lib', 'main.js'));
    const bundle = await (esm.build || esm.default.build)({
      entryPoints: [join(here, 'actions_fixture.js')],
      bundle: true,
      format: 'esm',
      write: false,
      target: ['chrome110'],
      logLevel: 'warning',
    });
    const real = await page.goto(`${url}/clusterws/ui/`);
    const csp = real.headers()['content-security-policy'];
    check(csp && csp.includes("script-src 'self'"), `the UI is served with its CSP: ${csp}`);
    const fixture = `${url}/clusterws/ui/test-actions.html`;
    await page.route(`${url}/clusterws/ui/test-actions.*`, (route) => {
      const js = route.request().url().endsWith('.js');
      route.fulfill({
        status: 200,
        headers: {
          'Content-Type': js ? 'text/javascript' : 'text/html; charset=utf-8',
          'Content-Security-Policy': csp,
        },
        body: js
          ? bundle.outputFiles[0].text
          : '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>actions</title>' +
            '<link rel="stylesheet" href="app.css"><script type="module" src="test-actions.js">' +
            '</script></head><body><main id="main"></main></body></html>',
      });
    });
    await page.goto(fixture);
    await page.locator('body[data-ready="1"]').waitFor();
    const box = page.getByLabel('Selection noderange');
    await box.fill(group);
    await box.press('Tab');
    const total = live.length + 1;
    await page.getByLabel('Selected nodes').filter({ hasText: String(total) }).waitFor();

    const results = page.getByRole('region', { name: 'Results' });
    const progress = results.getByRole('status');
    const item = (text) => results.getByRole('listitem').filter({ hasText: text });

    // Power off of many nodes asks first, with the count; Cancel sends nothing
    const jobsBefore = (await api('GET', '/jobs')).body.jobs.length;
    await page.getByRole('button', { name: 'Power reset', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    check((await dialog.textContent()).includes(`${total} nodes`), 'the confirm dialog names the count');
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    check((await api('GET', '/jobs')).body.jobs.length === jobsBefore, 'a cancelled confirm starts no job');

    await page.getByRole('button', { name: 'Power off', exact: true }).click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: `Power off ${total} nodes`, exact: true }).click();
    await progress.filter({ hasText: `${total} of ${total} answered, 1 failed` }).waitFor({ timeout: T });
    await item(`${fold}: off`).waitFor();
    const deadLine = await item(`${dead}:`).textContent();
    check(/timeout/.test(deadLine), `the dead BMC's node shows the API's words: ${deadLine}`);
    check((await results.getByRole('listitem').count()) === 2, 'one line per distinct result');
    await shot(page, 'actions-results');
    const off = await api('GET', `/nodes/${live.join(',')}/power`);
    for (const n of live) check(off.body[n].power === 'off', `${n} is off by the API: ${JSON.stringify(off.body)}`);

    // one refused call: the API's message for the whole selection, nothing run
    await box.fill(`${first},ghost`);
    await box.press('Tab');
    await page.getByRole('button', { name: 'Power status', exact: true }).click();
    await results.getByRole('alert').filter({ hasText: 'ghost' }).waitFor();

    // Power on needs no confirm; each node's state comes back
    await box.fill(group);
    await box.press('Tab');
    await page.getByLabel('Selected nodes').filter({ hasText: String(total) }).waitFor();
    await page.getByRole('button', { name: 'Power on', exact: true }).click();
    await progress.filter({ hasText: `${total} of ${total} answered, 1 failed` }).waitFor({ timeout: T });
    await item(`${fold}: on`).waitFor();
    const on = await api('GET', `/nodes/${live.join(',')}/power`);
    for (const n of live) check(on.body[n].power === 'on', `${n} is on by the API: ${JSON.stringify(on.body)}`);
    await page.unroute(`${url}/clusterws/ui/test-actions.*`);

    // ---- the node page --------------------------------------------------------------------------
    step('the node page');
    await page.goto(`${url}/clusterws/ui/#/node/${first}`);
    await page.getByRole('heading', { name: first, level: 1 }).waitFor();
    const attrs = page.getByRole('table', { name: 'Attributes' });
    await attrs.getByRole('row', { name: /bmcport/ }).waitFor();
    check((await page.getByRole('link', { name: 'Console' }).getAttribute('href')) === `#/console/${first}`,
          'the console link');
    // the rows are sorted by attribute name
    const names = await attrs.getByRole('rowheader').allTextContents();
    check(names.join() === [...names].sort().join(), `attributes sorted: ${names}`);

    // power from the page: one node, no confirm; the power line follows the result
    const powerLine = page.locator('.node-power-value');
    const nodeResults = page.getByRole('region', { name: 'Results' });
    await page.getByRole('button', { name: 'Power off', exact: true }).click();
    check(!(await page.getByRole('dialog').isVisible()), 'no confirm for one node');
    await nodeResults.getByRole('listitem').filter({ hasText: `${first}: off` }).waitFor({ timeout: T });
    await powerLine.filter({ hasText: /^off$/ }).waitFor();
    await page.getByRole('button', { name: 'Power on', exact: true }).click();
    await nodeResults.getByRole('listitem').filter({ hasText: `${first}: on` }).waitFor({ timeout: T });
    await powerLine.filter({ hasText: /^on$/ }).waitFor();
    // another client powers it off: the power event reaches the page
    check((await api('PUT', `/nodes/${first}/power`, { action: 'off' })).status === 200, 'power off by API');
    await powerLine.filter({ hasText: /^off$/ }).waitFor({ timeout: 5000 });
    await page.getByRole('button', { name: 'Power status', exact: true }).click();
    await nodeResults.getByRole('listitem').filter({ hasText: `${first}: off` }).waitFor({ timeout: T });

    // next boot and beacon
    await page.getByLabel('Next boot').selectOption('net');
    await page.getByRole('button', { name: 'Set next boot', exact: true }).click();
    await nodeResults.getByRole('listitem').filter({ hasText: `${first}: ` }).waitFor({ timeout: T });
    await page.getByLabel('Next boot').selectOption('stat');
    await page.getByRole('button', { name: 'Set next boot', exact: true }).click();
    await nodeResults.getByRole('listitem').filter({ hasText: `${first}: Network` }).waitFor({ timeout: T });
    await page.getByRole('button', { name: 'Beacon on', exact: true }).click();
    await nodeResults.getByRole('listitem').filter({ hasText: `${first}: on` }).waitFor({ timeout: T });

    // vitals, inventory, event log: read when their tab is opened
    await page.getByRole('tab', { name: 'Vitals' }).click();
    await page.getByRole('tabpanel', { name: 'Vitals' }).getByRole('row', { name: /CPU Temp/ }).waitFor({ timeout: T });
    await page.getByRole('tab', { name: 'Inventory' }).click();
    await page.getByRole('tabpanel', { name: 'Inventory' }).getByRole('table').waitFor({ timeout: T });
    await page.getByRole('tab', { name: 'Event log' }).click();
    await page
      .getByRole('tabpanel', { name: 'Event log' })
      .getByRole('listitem')
      .filter({ hasText: 'Sensor 0x30' })
      .waitFor({ timeout: T });
    // the tabs move with the arrow keys
    await page.getByRole('tab', { name: 'Event log' }).press('ArrowRight');
    check((await page.getByRole('tab', { name: 'Attributes' }).getAttribute('aria-selected')) === 'true',
          'ArrowRight from the last tab selects the first');

    // edit: one attribute changed, saved, seen through the API
    step('editing attributes');
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const ip = page.getByRole('textbox', { name: 'ip', exact: true });
    await ip.fill('10.1.0.12');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved 1 attribute: ip.' }).waitFor();
    await attrs.getByRole('row', { name: /^ip 10\.1\.0\.12$/ }).waitFor();
    const saved = await api('GET', `/nodes/${first}/attrs/ip`);
    check(saved.body[first].ip === '10.1.0.12', `ip saved: ${JSON.stringify(saved.body)}`);
    const bmcport = (await api('GET', `/nodes/${first}/attrs/bmcport`)).body[first].bmcport;

    // a value the API refuses: its message, role=alert, nothing changed
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await ip.fill('|op(\\d+)|10.1.0.(`id`)|');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: "The value of 'ip' is not a valid xCAT expression" });
    await alert.waitFor();
    await shot(page, 'node-page-error');
    check((await ip.inputValue()).includes('`id`'), 'the input keeps what was typed');
    const after = await api('GET', `/nodes/${first}/attrs/ip,bmcport`);
    check(after.body[first].ip === '10.1.0.12' && after.body[first].bmcport === bmcport,
          `nothing changed: ${JSON.stringify(after.body)}`);
    await page.getByRole('button', { name: 'Cancel edit', exact: true }).click();
    await attrs.getByRole('row', { name: /^ip 10\.1\.0\.12$/ }).waitFor();

    // a change by another client shows up without a reload
    check((await api('PUT', `/nodes/${first}`, { ip: '10.1.0.13' })).status === 200, 'PUT by API');
    await attrs.getByRole('row', { name: /^ip 10\.1\.0\.13$/ }).waitFor({ timeout: 5000 });
    await shot(page, 'node-page');
    step('done');
  } finally {
    await finish(browser);
  }
});
