// The nodeshell, jobs and console views in the browser (run by tests/web/shellterm_test.cpp):
// a nodeshell over two sshd "racks" and a dead node folds into two groups and a failed one;
// a long job (sleep 30) is cancelled from the jobs view; a console shows its replay, echoes a
// typed line, and switches to read-only and back. Screenshots of the three views.
import { open, login, shot, check, finish, run, since, url } from './harness.mjs';

const portA = process.env.CWS_PORT_A;
const portB = process.env.CWS_PORT_B;
const consoleNode = process.env.CWS_CONSOLE_NODE;

const step = (s) => console.log(`[shellterm] ${s}`);

await run(async () => {
  const { browser, page } = await open();

  async function waitText(locator, text, timeout = 20000) {
    const end = Date.now() + timeout;
    let got = '';
    while (Date.now() < end) {
      got = (await locator.textContent().catch(() => '')) || '';
      if (got.includes(text)) return got;
      await locator.page().waitForTimeout(100);
    }
    throw new Error(`waited ${timeout} ms for "${text}"; got: ${got}`);
  }

  await login(page, process.env.CWS_USER, process.env.CWS_PASSWORD);

  // --- Nodeshell: every node's output, folded.
  step('nodeshell');
  await page.getByRole('link', { name: 'Nodeshell' }).click();
  await page.getByLabel('Noderange').fill('sh[01-06],shdead');
  await page.getByLabel('Command').fill('echo port ${SSH_CONNECTION##* }');
  const t0 = performance.now();
  await page.getByRole('button', { name: 'Run' }).click();
  const progress = page.locator('.shell-progress');
  await waitText(progress, '7 of 7 done, 1 failed');
  step(`nodeshell over 7 nodes answered in ${since(t0)} ms`);
  const a = page.getByRole('region', { name: 'Output of sh[01-04]' });
  const b = page.getByRole('region', { name: 'Output of sh[05-06]' });
  const dead = page.getByRole('region', { name: 'Failed shdead' });
  check((await a.textContent()).includes(`port ${portA}`), `rack A's group: ${await a.textContent()}`);
  check((await a.textContent()).includes('(4 nodes)'), 'rack A has 4 nodes');
  check((await b.textContent()).includes(`port ${portB}`), `rack B's group: ${await b.textContent()}`);
  check((await b.textContent()).includes('(2 nodes)'), 'rack B has 2 nodes');
  check(/refused/i.test(await dead.textContent()), `the dead node's error: ${await dead.textContent()}`);
  check((await page.locator('section.fold').count()) === 3, 'three groups: two outputs, one failure');
  await shot(page, 'shell');

  // Answers stream in: rack B answers at once, rack A three seconds later; rack B's group shows
  // before rack A has answered.
  await page.getByLabel('Noderange').fill('sh[01-06]');
  await page.getByLabel('Command').fill(`[ \${SSH_CONNECTION##* } = ${portA} ] && sleep 3; echo streamed`);
  await page.getByRole('button', { name: 'Run' }).click();
  await waitText(progress, '2 of 6 done');
  check((await page.getByRole('region', { name: 'Output of sh[05-06]' }).count()) === 1, 'rack B first');
  check((await page.locator('section.fold').count()) === 1, 'rack A not yet');
  await waitText(progress, '6 of 6 done, 0 failed');
  check((await page.getByRole('region', { name: 'Output of sh[01-06]' }).count()) === 1, 'then one group of six');

  // A noderange with an unknown node: the API's error as it words it, nothing run.
  await page.getByLabel('Noderange').fill('sh01,nosuchnode');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitText(page.getByRole('alert'), 'nosuchnode');
  check((await page.locator('section.fold').count()) === 0, 'no output for a refused noderange');

  // --- A long job, cancelled from the jobs view.
  step('long job');
  await page.getByLabel('Noderange').fill('sh01');
  await page.getByLabel('Command').fill('sleep 30');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('button', { name: 'Cancel' }).waitFor({ state: 'visible' });
  await page.goto(`${url}/clusterws/ui/#/jobs`);
  const cancel = page.getByRole('button', { name: /^Cancel job / });
  await cancel.waitFor({ state: 'visible', timeout: 10000 });
  check((await cancel.count()) === 1, 'one running job');
  const label = await cancel.getAttribute('aria-label');
  const id = label.replace('Cancel job ', '');
  const row = page.locator(`tr[data-job="${id}"]`);
  check((await row.textContent()).includes('running'), `the job runs: ${await row.textContent()}`);
  const t1 = performance.now();
  await cancel.click();
  await waitText(row, 'cancelled', 15000);
  step(`cancelled in ${since(t1)} ms`);
  check((await page.getByRole('button', { name: /^Cancel job / }).count()) === 0, 'no Cancel once cancelled');
  await page.getByRole('button', { name: `Open job ${id}` }).click();
  const detail = page.getByRole('region', { name: /^Job / });
  await waitText(detail, 'Cancelled by');
  check((await detail.textContent()).includes('sh01'), 'the job\'s node is listed');
  // A job started elsewhere (another tab) appears by its events, without a reload, and ends.
  const started = await page.evaluate(async () => {
    const s = await (await fetch('/clusterws/session')).json();
    const r = await fetch('/clusterws/nodes/sh02/nodeshell?async=1', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf },
      body: JSON.stringify({ command: 'echo by event' }),
    });
    return (await r.json()).job;
  });
  await waitText(page.locator(`tr[data-job="${started}"]`), 'done', 10000);
  // The nodeshell job of the first part is in the list too, done, with its failure counted.
  check((await page.locator('table.jobs tbody tr').count()) >= 2, 'both jobs are listed');
  await shot(page, 'jobs');

  // --- A console: replay, typing, another page watching read-only and taking over, the log.
  step('console');
  await page.goto(`${url}/clusterws/ui/#/console/${consoleNode}`);
  const screen = page.locator('.xterm-rows');
  await waitText(screen, 'replayed before the browser came');
  await waitText(screen, 'truecolor text'); // a 24-bit colour: xterm's style attribute, no CSP report
  const state = page.locator('.console-state');
  await waitText(state, 'Attached read-write');
  await page.locator('.console-term').click();
  await page.keyboard.type('typed in the browser');
  await page.keyboard.press('Enter');
  // The serial side echoes: the line comes back as the node's output.
  await waitText(screen, 'typed in the browser');

  // A second page (the same user) asks read-write while the first writes: it reads only, named.
  const other = await page.context().newPage();
  await other.goto(`${url}/clusterws/ui/#/console/${consoleNode}`);
  const otherState = other.locator('.console-state');
  await waitText(otherState, 'Watching read-only: root has the console');
  await other.locator('.console-term').click();
  await other.keyboard.type('never sent from a reader');
  await waitText(otherState, 'Take over to type');
  await other.getByRole('button', { name: 'Take over' }).click();
  await waitText(otherState, 'Attached read-write');
  await waitText(state, 'Watching read-only'); // the first page was taken over
  await other.close();
  await page.getByRole('button', { name: 'Take over' }).click();
  await waitText(state, 'Attached read-write');
  await page.getByRole('button', { name: 'Watch read-only' }).click();
  await waitText(state, 'Watching read-only');
  await page.getByRole('button', { name: 'Take over' }).click();
  await waitText(state, 'Attached read-write');
  await waitText(page.getByLabel('Console log text'), 'replayed before the browser came');
  await shot(page, 'console');

  // A tablet's width: the terminal is fitted again, nothing scrolls sideways.
  await page.setViewportSize({ width: 768, height: 1024 });
  await page.waitForTimeout(300);
  const right = await page.locator('.xterm-screen').evaluate((e) => e.getBoundingClientRect().right);
  check(right <= 768, `the terminal fits a tablet's width (its right edge at ${right})`);
  const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
  check(scroll <= 768, `no sideways scroll at a tablet's width (${scroll})`);

  await finish(browser);
});
