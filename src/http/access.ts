/**
 * How a route is reached. Every route needs a principal (a bearer token, or the console's
 * session cookie) unless its config says otherwise: `access: 'public'` (health checks, the
 * dashboard's login form) or `access: 'browser'` (the queue dashboard, which its own session
 * cookie opens as well). Which role it needs: src/auth/route-roles.ts; the check:
 * access-control.ts.
 */
import type {} from 'fastify';

export type RouteAccess = 'token' | 'public' | 'browser';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route. @defaultValue 'token' */
    access?: RouteAccess;
  }
}

/** Where a browser signs in to the queue dashboard. */
export const BOARD_PATH = '/queues';
