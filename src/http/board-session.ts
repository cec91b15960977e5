/**
 * Session cookies. A browser cannot add `Authorization: Bearer` to the page loads of the queue
 * dashboard, so a form takes a token once and sets a cookie naming a session (src/auth/
 * sessions.ts: the principal is kept in Redis, the cookie holds a random id only); the console's
 * OpenID Connect sign-in sets one the same way. Signing out deletes the session.
 */

/** Name of the queue dashboard's cookie. */
export const BOARD_COOKIE = 'porter_board';

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
export function sessionCookie(
  name: string,
  value: string | undefined,
  options: { secure: boolean; path: string; maxAgeSeconds: number; sameSite?: 'Strict' | 'Lax' },
): string {
  const parts = [
    `${name}=${value ?? ''}`,
    `Path=${options.path}`,
    `Max-Age=${value === undefined ? 0 : options.maxAgeSeconds}`,
    'HttpOnly',
    // never sent by a request another site starts: no cross-site request forgery
    `SameSite=${options.sameSite ?? 'Strict'}`,
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
