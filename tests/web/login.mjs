// The login page in a real browser (tests/web/login_test.cpp runs it): a wrong password is
// refused with the API's message, a login shows the console, the cookie is out of the page's
// reach, a write without the CSRF token is refused, logout ends the session, and the page
// reports no console error or CSP violation.
import { open, login, shot, check, finish, run, problems } from './harness.mjs';

await run(async () => {
  const user = process.env.CWS_USER;
  const password = process.env.CWS_PASSWORD;
  const { browser, page } = await open();

  await page.getByRole('button', { name: 'Log in' }).waitFor();
  await shot(page, 'login');

  await login(page, user, 'not-the-password');
  const alert = page.getByRole('alert');
  await alert.filter({ hasText: 'Authentication failure' }).waitFor();

  await login(page, user, password);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  const who = await page.locator('#who').textContent();
  check(who === user, `the user is shown: '${who}'`);
  check(!(await page.evaluate(() => document.cookie)).includes('clusterws_session'),
        'the session cookie is HttpOnly');

  // the cookie reads the API; a write without X-CSRF-Token is refused
  const read = await page.evaluate(async () => (await fetch('/clusterws/nodes')).status);
  check(read === 200, `GET /nodes with the cookie: ${read}`);
  const forged = await page.evaluate(async () => {
    const r = await fetch('/clusterws/nodes/forged1', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ groups: 'all' }),
    });
    return { status: r.status, body: await r.text() };
  });
  check(forged.status === 403 && forged.body.includes('CSRF'), `POST without CSRF: ${JSON.stringify(forged)}`);

  // the harness does see a CSP violation: an inline style, provoked here, then forgotten
  await page.evaluate(() => {
    const d = document.createElement('div');
    d.innerHTML = '<span style="color: red">x</span>';
    document.body.append(d);
  });
  // (chromium's own "Refused to apply inline style" and the harness's violation listener)
  const csp = () => problems.filter((p) => /CSP|Content Security Policy/i.test(p)).length;
  for (let i = 0; i < 40 && csp() < 2; i++) await page.waitForTimeout(50);
  check(csp() === 2, `a CSP violation is caught twice: ${problems.join(' | ')}`);
  problems.length = 0;

  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('button', { name: 'Log in' }).waitFor();
  const after = await page.evaluate(async () => (await fetch('/clusterws/session')).status);
  check(after === 401, `GET /session after logout: ${after}`);

  await finish(browser);
});
