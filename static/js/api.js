// The one place the page talks to the server: adds the CSRF header, sends and parses JSON,
// and turns every failure into one shape (ApiError) so callers show one kind of message.

const csrfMeta = document.querySelector('meta[name="csrf-token"]');
export const csrfToken = csrfMeta ? csrfMeta.content : '';

/** A failed request: status, the API's error code and message, and any extra fields (field, turn_id). */
export class ApiError extends Error {
  constructor(status, code, message, extra = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.field = extra.field || null;
  }
}

function loginExpired() {
  const next = location.pathname + location.search + location.hash;
  location.assign('/login?next=' + encodeURIComponent(next));
}

/** Read an error body, JSON or not, into an ApiError (a proxy's HTML page must not leak in). */
export async function errorFrom(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const err = body && body.error ? body.error : {};
  const { code, message, ...extra } = err;
  const fallback = response.status === 429 ? 'Too many requests; wait a moment and retry.'
    : response.status >= 500 ? 'The server failed (' + response.status + '). Retry in a moment.'
      : 'Request failed (' + response.status + ').';
  return new ApiError(response.status, code || 'http_' + response.status, message || fallback, extra);
}

/**
 * Send a request. `body` is JSON-encoded unless it is FormData. Resolves to the parsed JSON
 * (null for 204), or the raw Response when `raw` is set (streams, downloads).
 */
export async function request(method, path, { body, signal, raw = false, headers = {} } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, signal, credentials: 'same-origin' };
  if (method !== 'GET' && method !== 'HEAD') init.headers['X-CSRF-Token'] = csrfToken;
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'Cannot reach the server. Check the connection and retry.');
  }
  if (response.status === 401) {
    loginExpired();
    throw new ApiError(401, 'unauthorized', 'Your login expired.');
  }
  if (!response.ok) throw await errorFrom(response);
  if (raw) return response;
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path, opts) => request('GET', path, opts);
export const post = (path, body, opts = {}) => request('POST', path, { ...opts, body });
export const put = (path, body, opts = {}) => request('PUT', path, { ...opts, body });
export const patch = (path, body, opts = {}) => request('PATCH', path, { ...opts, body });
export const del = (path, opts) => request('DELETE', path, opts);

/** Build a query string from the set values of `params`. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

export const enc = encodeURIComponent;

// The first data the page needs, sent inside the HTML by the server in the API's own shape
// (see web/pages.py): the sidebar's first page ('sessions') and the open session's newest
// messages ('chat'). Each part is handed out once; a page restored by Back/Forward from the
// HTTP cache may hold stale data, so it asks the API instead.
let boot = null;

/** The server-sent data for `key`, once; null when there is none (then call the API). */
export function takeBoot(key) {
  if (boot === null) {
    boot = {};
    const node = document.getElementById('boot-data');
    const nav = performance.getEntriesByType ? performance.getEntriesByType('navigation')[0] : null;
    if (node && !(nav && nav.type === 'back_forward')) {
      try {
        boot = JSON.parse(node.textContent) || {};
      } catch {
        boot = {};
      }
    }
    if (node) node.remove();
  }
  const value = boot[key] || null;
  delete boot[key];
  return value;
}
