/**
 * Who may call which route of the API. Every route needs `Authorization: Bearer <token>` unless
 * its config says otherwise: `access: 'public'` (health checks, the dashboard's login form) or
 * `access: 'browser'` (the queue dashboard, which a browser session cookie opens as well).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PorterError } from '../errors/porter-error.js';
import { checkBearer } from './auth.js';
import { BOARD_COOKIE, cookieValue, isBoardSession } from './board-session.js';
import { loginPage } from './login-page.js';

export type RouteAccess = 'token' | 'public' | 'browser';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route. @defaultValue 'token' */
    access?: RouteAccess;
  }
}

/** Where a browser signs in to the queue dashboard. */
export const BOARD_PATH = '/queues';

/**
 * The API's onRequest check. A browser route refused to a browser gets the login form (401);
 * its refusal is answered here, since the dashboard's routes have an error handler of their own.
 */
export async function checkAccess(
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
): Promise<FastifyReply | undefined> {
  const access = request.routeOptions.config?.access ?? 'token';
  if (access === 'public') return undefined;
  if (access !== 'browser') {
    checkBearer(request.headers.authorization, token);
    return undefined;
  }
  if (isBoardSession(cookieValue(request.headers.cookie, BOARD_COOKIE), token)) return undefined;
  try {
    checkBearer(request.headers.authorization, token);
    return undefined;
  } catch (error) {
    const refusal = error as PorterError;
    const wantsPage =
      request.method === 'GET' && /\btext\/html\b/.test(String(request.headers.accept ?? ''));
    if (wantsPage) {
      return reply
        .status(401)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(loginPage(`${BOARD_PATH}/login`));
    }
    return reply.status(refusal.httpStatus).send({ error: refusal.toJSON() });
  }
}
