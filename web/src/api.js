// The page's one way to the daemon: same origin, the session cookie (HttpOnly: the page never
// sees it), and the session's CSRF token on every request that changes something (docs/web.md).
export const base = '/clusterws';

let csrf = '';

/** An API error in the documented shape ({"error": ..., "errorcode": ...}) with its HTTP status. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.errorcode = body && body.errorcode;
    this.body = body;
  }
}

/**
 * Calls `base + path` and returns the parsed JSON body (null when empty); throws ApiError.
 * `body` is sent as JSON. Writes carry X-CSRF-Token.
 */
export async function request(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const text = await r.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = { error: text.trim() };
    }
  }
  if (!r.ok) {
    if (r.status === 401 && onUnauthorized) onUnauthorized();
    throw new ApiError(r.status, json);
  }
  return json;
}

let onUnauthorized = null;
/** Called when any request is answered 401 (the session ended): the shell shows the login. */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/** The current session ({user, csrf, expire}) or null when not logged in. */
export async function session() {
  const r = await fetch(base + '/session', { credentials: 'same-origin' });
  if (!r.ok) return null;
  const s = await r.json();
  csrf = s.csrf;
  return s;
}

/** Logs in; the daemon sets the session cookie. Throws ApiError (401, with backoff). */
export async function login(userName, userPW) {
  const r = await fetch(base + '/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ userName, userPW }),
    credentials: 'same-origin',
  });
  const text = await r.text();
  const json = text ? JSON.parse(text) : null;
  if (!r.ok) throw new ApiError(r.status, json);
  csrf = json.csrf;
  return json;
}

/** Revokes the session and clears its cookie. */
export async function logout() {
  try {
    await request('DELETE', '/session');
  } finally {
    csrf = '';
  }
}

/**
 * Follows the change feed (GET /events, Server-Sent Events) with the session cookie.
 * `query` is the events query string (types=..., noderange=...); `on(eventName, data)` is
 * called for each event (changes, job, power, reset, ...). Returns a function that stops it.
 */
export function events(query, on) {
  const source = new EventSource(`${base}/events${query ? '?' + query : ''}`, {
    withCredentials: true,
  });
  for (const name of ['changes', 'job', 'power', 'reset', 'servicenode']) {
    source.addEventListener(name, (e) => {
      let data = null;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      on(name, data);
    });
  }
  return () => source.close();
}

/** Encodes a noderange for a path segment (xCAT's grammar keeps its own characters). */
export function nr(range) {
  return encodeURIComponent(range).replace(/%2C/g, ',');
}

/** Reads an NDJSON response body, calling `on(object)` per line; resolves at its end. */
export async function readLines(response, on) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (text) on(JSON.parse(text));
    }
  }
  if (buf.trim()) on(JSON.parse(buf));
}
