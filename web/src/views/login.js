// The login form: userName/password against POST /clusterws/session (the API's credentials,
// policy and login backoff). params[0] is called with the session once logged in.
import * as api from '../api.js';

export function mount(el, [done]) {
  el.innerHTML = `
    <form class="login" aria-labelledby="login-title">
      <h1 id="login-title">Log in to clusterws</h1>
      <label>User name <input name="user" autocomplete="username" required></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
      <button type="submit">Log in</button>
      <p class="error" role="alert"></p>
    </form>`;
  const form = el.querySelector('form');
  const error = el.querySelector('.error');
  form.user.focus();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    form.querySelector('button').disabled = true;
    try {
      const s = await api.login(form.user.value, form.password.value);
      done(s);
    } catch (err) {
      error.textContent = err.message;
      form.password.value = '';
      form.password.focus();
    } finally {
      form.querySelector('button').disabled = false;
    }
  });
}
