/**
 * Calls to porter's HTTP API. Signed in with a token, the token lives in this tab's
 * sessionStorage only and goes out as `Authorization: Bearer`; signed in with the organisation's
 * identity provider, the HttpOnly session cookie goes out on its own and each change carries the
 * session's CSRF token (`x-porter-csrf`). A refused token or session signs the console out.
 */
const TOKEN_KEY = 'porter.token';
let csrf;

/** The CSRF token of a cookie session (from GET /v1/session). */
export function setSessionCsrf(value) {
  csrf = value;
}

/** Whether the console is signed in with a cookie session rather than a token. */
export function hasSession() {
  return csrf !== undefined;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** An answer other than 2xx: porter's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(
  path,
  { method = 'GET', json, form, raw, contentType, signal, signingIn = false } = {},
) {
  const headers = {};
  if (token()) headers.authorization = `Bearer ${token()}`;
  else if (csrf !== undefined && method !== 'GET') headers['x-porter-csrf'] = csrf;
  let body;
  if (json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = form;
  } else if (raw !== undefined) {
    // a file sent as the body, as it is (a bundle for /v1/migrations)
    headers['content-type'] = contentType;
    body = raw;
  }
  const response = await fetch(path, { method, headers, body, signal });
  if (response.status === 401) {
    clearToken();
    csrf = undefined;
    if (!signingIn) window.dispatchEvent(new Event('porter:signed-out'));
    throw new ApiError(401, 'PORTER_UNAUTHORIZED', 'The token was refused; sign in again.');
  }
  if (!response.ok) {
    const data = await response.json().catch(() => undefined);
    throw new ApiError(
      response.status,
      data?.error?.code ?? `HTTP_${response.status}`,
      data?.error?.message ?? `${response.status} ${response.statusText}`,
    );
  }
  return response;
}

/** The JSON answer of a call (undefined for 204). */
export async function api(path, options) {
  const response = await call(path, options);
  if (response.status === 204) return undefined;
  return response.json();
}

/** Fetches a file with the token and hands it to the browser as a download named `fileName`. */
export async function download(path, fileName) {
  const response = await call(path);
  saveBlob(await response.blob(), fileName);
}

/** Offers `blob` as a download. */
export function saveBlob(blob, fileName) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Path segment of an id. */
export function segment(id) {
  return encodeURIComponent(id);
}
