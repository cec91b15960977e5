/** The dashboard's session cookie: signed by the token, expiring, never the token itself. */
import { describe, expect, it } from 'vitest';
import {
  BOARD_SESSION_SECONDS,
  boardCookie,
  cookieValue,
  isBoardSession,
  newBoardSession,
} from '../../src/http/board-session.js';

const TOKEN = 'session-token-0123456789';

describe('board sessions', () => {
  it('hold until they expire, and only for the token that signed them', () => {
    const now = Date.UTC(2026, 0, 1);
    const session = newBoardSession(TOKEN, now);
    expect(session).not.toContain(TOKEN);
    expect(isBoardSession(session, TOKEN, now)).toBe(true);
    expect(isBoardSession(session, TOKEN, now + (BOARD_SESSION_SECONDS - 1) * 1000)).toBe(true);
    expect(isBoardSession(session, TOKEN, now + BOARD_SESSION_SECONDS * 1000)).toBe(false);
    expect(isBoardSession(session, `${TOKEN}-new`, now)).toBe(false);
    // a later expiry with the old signature is refused
    const [expiresAt, signature] = session.split('.');
    expect(isBoardSession(`${Number(expiresAt) + 3600}.${signature}`, TOKEN, now)).toBe(false);
    expect(isBoardSession(undefined, TOKEN, now)).toBe(false);
    expect(isBoardSession('', TOKEN, now)).toBe(false);
  });

  it('travel in an HttpOnly, SameSite=Strict cookie that a logout clears', () => {
    const header = boardCookie('1.abc', { secure: true, path: '/queues' });
    expect(header).toBe(
      `porter_board=1.abc; Path=/queues; Max-Age=${BOARD_SESSION_SECONDS}; HttpOnly; SameSite=Strict; Secure`,
    );
    expect(boardCookie(undefined, { secure: false, path: '/queues' })).toMatch(
      /^porter_board=; Path=\/queues; Max-Age=0; HttpOnly; SameSite=Strict$/,
    );
    expect(cookieValue('a=1; porter_board=2.x ; b=3', 'porter_board')).toBe('2.x');
    expect(cookieValue('a=1', 'porter_board')).toBeUndefined();
  });
});
