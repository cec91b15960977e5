/**
 * The browser's way into the queue dashboard: a browser cannot add `Authorization: Bearer` to
 * the page loads and requests of a dashboard, so a form takes the API token once and sets a
 * cookie that stands for it. The cookie holds an expiry and an HMAC of it keyed by the token: no
 * state on the server, and a new token ends every session.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Name of the cookie. */
export const BOARD_COOKIE = 'porter_board';
/** How long a session lasts. */
export const BOARD_SESSION_SECONDS = 12 * 60 * 60;

function sessionKey(token: string): Buffer {
  return createHash('sha256').update(`porter-board-session\u0000${token}`).digest();
}

function signature(token: string, expiresAt: number): string {
  return createHmac('sha256', sessionKey(token)).update(String(expiresAt)).digest('base64url');
}

/** A cookie value valid until `nowMs` + the session length. */
export function newBoardSession(token: string, nowMs = Date.now()): string {
  const expiresAt = Math.floor(nowMs / 1000) + BOARD_SESSION_SECONDS;
  return `${expiresAt}.${signature(token, expiresAt)}`;
}

/** True when the value is a session this token signed and it has not expired. */
export function isBoardSession(
  value: string | undefined,
  token: string,
  nowMs = Date.now(),
): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!match) return false;
  const expiresAt = Number(match[1]);
  if (expiresAt * 1000 <= nowMs) return false;
  const expected = Buffer.from(signature(token, expiresAt));
  const given = Buffer.from(match[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The value of one cookie in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    if (part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie header of a session, or of its removal when `value` is undefined. */
export function boardCookie(
  value: string | undefined,
  options: { secure: boolean; path: string },
): string {
  const parts = [
    `${BOARD_COOKIE}=${value ?? ''}`,
    `Path=${options.path}`,
    `Max-Age=${value === undefined ? 0 : BOARD_SESSION_SECONDS}`,
    'HttpOnly',
    // never sent by a request another site starts: no cross-site request forgery
    'SameSite=Strict',
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
