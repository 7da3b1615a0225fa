// The browser tests' harness (docs/web.md, "Browser tests"): Debian's chromium, headless,
// driven by playwright-core from web/node_modules. A test script imports it:
//
//   import { open, login, shot, check, finish } from './harness.mjs';
//   const { browser, page } = await open();
//   await login(page, process.env.CWS_USER, process.env.CWS_PASSWORD);
//   ...
//   await finish(browser); // fails if the page logged a console error or a CSP violation
//
// Environment (set by tests/support/browser.hpp): CWS_URL (https://127.0.0.1:PORT), CWS_USER,
// CWS_PASSWORD, CWS_SHOTS (the directory screenshots go to).
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(root, 'web/package.json'));
const { chromium } = require('playwright-core');

export const url = process.env.CWS_URL || 'https://127.0.0.1:8443';
export const shots = process.env.CWS_SHOTS || '';

/** Every console error and CSP violation the pages reported, as text. */
export const problems = [];

// The API's refusals (a wrong password: 401; a request without its CSRF token, or a command
// that failed: 403) are answers the tests provoke and check themselves; chromium logs each as
// "Failed to load resource". Every other console error fails the run (a missing file's 404
// among them) unless the test allows its status with allowStatus().
const allowed = new Set([401, 403]);

/** Lets the page's failed loads with these HTTP statuses pass (e.g. 400 for a bad value). */
export function allowStatus(...statuses) {
  for (const s of statuses) allowed.add(s);
}

function expected(text) {
  const m = text.match(/^Failed to load resource: the server responded with a status of (\d+)/);
  return m !== null && allowed.has(Number(m[1]));
}

/**
 * Opens chromium (headless, the daemon's test certificate accepted, 1280x720) with one page at
 * the web console. `options.width`/`height` change the viewport (e.g. a tablet's 768x1024).
 * @returns {{browser, context, page}}
 */
export async function open(options = {}) {
  const args = [];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  const browser = await chromium.launch({
    executablePath: process.env.CWS_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args,
  });
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: options.width || 1280, height: options.height || 720 },
  });
  // CSP violations reach the page as events; the console message of one is caught below too
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`);
    });
  });
  const page = await context.newPage();
  watch(page);
  context.on('page', watch);
  await page.goto(url + '/clusterws/ui/', { waitUntil: 'load' });
  return { browser, context, page };
}

function watch(page) {
  page.on('console', (m) => {
    const where = m.location() && m.location().url ? ` (${m.location().url})` : '';
    const text = m.text() + where;
    if (m.type() === 'error' && !expected(text)) problems.push(`console error: ${text}`);
    else if (/Content.Security.Policy/i.test(text)) problems.push(`CSP: ${text}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
}

/** Logs in through the login form (accessible names: "User name", "Password", "Log in"). */
export async function login(page, user, password) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** Saves a screenshot `<name>.png` into CWS_SHOTS (nothing when it is not set). */
export async function shot(page, name) {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

/** Throws (failing the run) unless `cond` holds. */
export function check(cond, message) {
  if (!cond) throw new Error(`check failed: ${message}`);
}

/** Milliseconds since `t0` (performance.now() in node), for the speed goals. */
export function since(t0) {
  return Math.round(performance.now() - t0);
}

/**
 * Closes the browser; throws (failing the run) when a page logged a console error or a CSP
 * violation meanwhile.
 */
export async function finish(browser) {
  await browser.close();
  if (problems.length > 0) {
    throw new Error(`the page reported ${problems.length} problem(s):\n${problems.join('\n')}`);
  }
}

/**
 * Runs `body()` as a test script: prints `ok` and exits 0, or prints the error and exits 1
 * (the gtest side shows the output).
 */
export async function run(body) {
  const t0 = performance.now();
  try {
    await body();
    console.log(`ok (${since(t0)} ms)`);
    process.exit(0);
  } catch (e) {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(1);
  }
}
