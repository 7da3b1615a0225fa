// The browser test of the action bar (web/src/actions.js) as the node table (web/src/views/
// nodes.js) mounts it and of the node page (web/src/views/node.js) against a real daemon whose
// nodes have ipmi_sim BMCs (tests/web/nodeops_test.cpp sets them up): select nodes in the table
// (checkbox, keyboard, "all matching"), power them off and on and see each node's result folded
// as xcoll, the confirm step, a BMC that does not answer shown with the API's words, the table's
// Power column following the power events, "Node status" filling its nodestat column, the node page's power
// line, next boot, beacon, vitals, inventory, event log, an attribute edited and saved (checked
// through the API) and a bad value refused with the API's message (nothing changed).
//
// Env (besides the harness's CWS_URL, CWS_USER, CWS_PASSWORD, CWS_SHOTS):
//   NODEOPS_GROUP  the group of every node with a BMC, a dead one included ("ops")
//   NODEOPS_LIVE   the nodes whose BMC answers, comma list ("op01,op02,op03")
//   NODEOPS_DEAD   the node whose BMC does not answer ("opdead")
//   NODEOPS_FOLD   the live nodes as the result panel folds them ("op[01-03]")
//   NODEOPS_PROBE  the group of nodestat's nodes: <probe>01 answers on its ports, <probe>02
//                  refuses every port, <probe>03 drops every SYN ("probe")
import { open, login, shot, check, finish, run } from './harness.mjs';

const env = process.env;
const url = env.CWS_URL;
const group = env.NODEOPS_GROUP || 'ops';
const live = (env.NODEOPS_LIVE || 'op01,op02,op03').split(',');
const dead = env.NODEOPS_DEAD || 'opdead';
const fold = env.NODEOPS_FOLD || 'op[01-03]';
const probe = env.NODEOPS_PROBE || 'probe';
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

    // ---- the bar over a selection made in the node table --------------------------------------
    step('actions on a selection in the node table');
    await page.goto(`${url}/clusterws/ui/#/nodes`);
    const grid = page.getByRole('grid', { name: 'Nodes' });
    const filter = page.getByLabel('Noderange', { exact: true });
    const total = live.length + 1;
    await filter.fill(group);
    await filter.press('Enter');
    await page.getByText(`${total} nodes`, { exact: true }).waitFor();
    const row = (n) => grid.getByRole('row').filter({ has: page.getByRole('link', { name: n, exact: true }) });
    const cell = (n, c) => row(n).locator(`.nt-col-${c}`);
    // the first node by its checkbox, the rest by the keyboard: down to the last, Shift+Space
    // selects the range from the first
    await row(first).getByRole('checkbox', { name: `Select ${first}` }).click();
    for (let i = 0; i < total - 1; ++i) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Shift+Space');
    await page.getByText(`${total} selected`, { exact: true }).waitFor();
    for (const n of [...live, dead]) {
      check((await row(n).getAttribute('aria-selected')) === 'true', `${n} is selected`);
    }
    // nothing has sent a power event yet: the Power column is empty
    for (const n of live) check((await cell(n, 'power').textContent()) === '', `${n}'s power is not known yet`);

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
    const off = await api('GET', `/nodes/${live.join(',')}/power`);
    for (const n of live) check(off.body[n].power === 'off', `${n} is off by the API: ${JSON.stringify(off.body)}`);
    // the Power column follows the power events (the table does not read the bar's results)
    for (const n of live) await cell(n, 'power').filter({ hasText: /^off$/ }).waitFor({ timeout: 5000 });
    check((await cell(dead, 'power').textContent()) === '', 'no power event for the dead BMC');
    await shot(page, 'actions-results');

    // Power on needs no confirm; each node's state comes back, in the results and the table
    await page.getByRole('button', { name: 'Power on', exact: true }).click();
    await progress.filter({ hasText: `${total} of ${total} answered, 1 failed` }).waitFor({ timeout: T });
    await item(`${fold}: on`).waitFor();
    const on = await api('GET', `/nodes/${live.join(',')}/power`);
    for (const n of live) check(on.body[n].power === 'on', `${n} is on by the API: ${JSON.stringify(on.body)}`);
    for (const n of live) await cell(n, 'power').filter({ hasText: /^on$/ }).waitFor({ timeout: 5000 });
    // another client's power change reaches the table by event, without a reload
    const other = live[1];
    check((await api('PUT', `/nodes/${other}/power`, { action: 'off' })).status === 200, 'power off by API');
    await cell(other, 'power').filter({ hasText: /^off$/ }).waitFor({ timeout: 5000 });
    check((await api('PUT', `/nodes/${other}/power`, { action: 'on' })).status === 200, 'power on by API');
    await cell(other, 'power').filter({ hasText: /^on$/ }).waitFor({ timeout: 5000 });

    // an empty selection: the bar says so and sends nothing
    await page.getByRole('button', { name: 'Close results', exact: true }).click();
    await filter.fill(probe);
    await filter.press('Enter');
    await page.getByText('3 nodes', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Node status', exact: true }).click();
    await results.getByRole('alert').filter({ hasText: 'Select one or more nodes first.' }).waitFor();

    // ---- Node status: nodestat on the selection fills the nodestat column ----------------------
    step('node status in the node table');
    await page.getByLabel('Select all matching').check();
    await page.getByText('all 3 selected', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Node status', exact: true }).click();
    await progress.filter({ hasText: '3 of 3 answered' }).waitFor({ timeout: T });
    await item(`${probe}01: https,sshd`).waitFor();
    await item(`${probe}02: ping`).waitFor();
    await item(`${probe}03: noping`).waitFor();
    const header = page.getByRole('columnheader', { name: 'Nodestat' });
    await header.waitFor();
    await cell(`${probe}01`, 'nodestat').filter({ hasText: /^https,sshd$/ }).waitFor();
    await cell(`${probe}02`, 'nodestat').filter({ hasText: /^ping$/ }).waitFor();
    await cell(`${probe}03`, 'nodestat').filter({ hasText: /^noping$/ }).waitFor();
    await shot(page, 'nodes-nodestat');

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
