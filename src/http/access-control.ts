/**
 * Who may call which route. A request names its principal with `Authorization: Bearer <token>`
 * (PORTER_API_TOKEN, an admin, or a token from `porter tokens create`) or with a session cookie
 * (the console's OpenID Connect sign-in, the queue dashboard's form). The route's role
 * (src/auth/route-roles.ts) must be within the principal's, and a principal limited to some
 * targets touches only their jobs; else 403 PORTER_FORBIDDEN naming the role needed, and the
 * route's handler never runs. A session's request that changes state must carry the session's
 * CSRF token (`x-porter-csrf`) and come from porter's own origin. Bad tokens count towards the
 * address's failure limit, and each is an audit event.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { PorterContext } from '../app/context.js';
import { securityOf } from '../app/security.js';
import { runAs } from '../auth/acting.js';
import { API_TOKEN_PRINCIPAL, type Principal } from '../auth/principal.js';
import { roleIncludes } from '../auth/roles.js';
import { routeRule } from '../auth/route-roles.js';
import { csrfMatches, type Session } from '../auth/sessions.js';
import { checkTargetAllowed } from '../auth/target-limits.js';
import { newActionId } from '../audit/audit-log.js';
import { whoOf } from '../audit/audit-event.js';
import { PorterError } from '../errors/porter-error.js';
import { BOARD_PATH } from './access.js';
import { BOARD_COOKIE, cookieValue } from './board-session.js';
import { loginPage } from './login-page.js';
import { actorOf } from './request-actor.js';
import { jobTargetOf } from './job-target-of.js';

/** The console's session cookie (OpenID Connect sign-in). */
export const SESSION_COOKIE = 'porter_session';
export const CSRF_HEADER = 'x-porter-csrf';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Whether `given` is the API token, compared in constant time. */
export function isApiToken(given: string, token: string | undefined): boolean {
  return token !== undefined && timingSafeEqual(digest(given), digest(token));
}

/** The principal of a presented token (PORTER_API_TOKEN or a stored one), if valid. */
export async function tokenPrincipal(
  context: PorterContext,
  given: string,
  apiToken: string | undefined,
): Promise<Principal | undefined> {
  if (isApiToken(given, apiToken)) return API_TOKEN_PRINCIPAL;
  return securityOf(context).tokens.verify(given);
}

/** Counts a bad credential from the request's address and writes its audit event. */
export async function recordFailure(
  context: PorterContext,
  request: FastifyRequest,
  action: string,
  what: Record<string, unknown>,
): Promise<void> {
  const security = securityOf(context);
  const count = await security.failures.fail(request.ip);
  await security.audit.append({
    at: new Date().toISOString(),
    action,
    phase: 'done',
    actionId: newActionId(),
    who: whoOf(undefined),
    from: actorOf(request).from,
    what: { ...what, failuresThisMinute: count },
    result: { ok: false, status: 401, code: 'PORTER_UNAUTHORIZED' },
  });
}

/** Opens a session for a principal that just signed in, and writes its audit event; its id. */
export async function signIn(
  context: PorterContext,
  request: FastifyRequest,
  principal: Principal,
  via: string,
): Promise<string> {
  const security = securityOf(context);
  const { id } = await security.sessions.create(principal);
  await security.audit.append({
    at: new Date().toISOString(),
    action: 'signin',
    phase: 'done',
    actionId: newActionId(),
    who: whoOf(principal),
    from: actorOf(request).from,
    what: { via },
    result: { ok: true },
  });
  return id;
}

/** Refuses the address once it failed too often this minute. */
export async function checkFailureLimit(
  context: PorterContext,
  request: FastifyRequest,
): Promise<void> {
  if (await securityOf(context).failures.blocked(request.ip)) {
    throw new PorterError(
      'PORTER_RATE_LIMITED',
      'too many failed sign-ins or bad tokens from this address; wait a minute',
    );
  }
}

interface Resolved {
  principal: Principal;
  session?: Session;
}

async function resolve(
  context: PorterContext,
  request: FastifyRequest,
  apiToken: string | undefined,
  browserRoute: boolean,
): Promise<Resolved | undefined> {
  const header = request.headers.authorization;
  if (header !== undefined) {
    await checkFailureLimit(context, request);
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const principal = match ? await tokenPrincipal(context, match[1]!.trim(), apiToken) : undefined;
    if (!principal) {
      await recordFailure(context, request, 'token.refused', {
        method: request.method,
        url: request.routeOptions.url,
      });
      throw new PorterError('PORTER_UNAUTHORIZED', 'send Authorization: Bearer <token>');
    }
    return { principal };
  }
  const { sessions } = securityOf(context);
  // the dashboard's cookie opens the dashboard only
  for (const name of browserRoute ? [SESSION_COOKIE, BOARD_COOKIE] : [SESSION_COOKIE]) {
    const session = await sessions.get(cookieValue(request.headers.cookie, name));
    if (session) return { principal: session.principal, session };
  }
  return undefined;
}

/** A session's request that changes state comes from porter's own pages. */
function checkCsrf(request: FastifyRequest, session: Session, browserRoute: boolean): void {
  if (READS.has(request.method)) return;
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  const foreign =
    (typeof site === 'string' && site !== 'same-origin' && site !== 'none') ||
    (typeof origin === 'string' && origin !== `${request.protocol}://${request.host}`);
  // the queue dashboard's own scripts cannot send the header; SameSite=Strict and the origin do
  if (foreign || (!browserRoute && !csrfMatches(session, request.headers[CSRF_HEADER]))) {
    throw new PorterError(
      'PORTER_FORBIDDEN',
      `a signed-in browser's change must come from porter's pages with the ${CSRF_HEADER} header`,
    );
  }
}

export interface AccessControlOptions {
  context: PorterContext;
  /** PORTER_API_TOKEN: an admin. */
  token?: string;
}

export function registerAccessControl(app: FastifyInstance, options: AccessControlOptions): void {
  const { context } = options;
  // the rest of the request runs as its actor: use cases see who acts (AsyncLocalStorage)
  app.addHook('onRequest', (request, _reply, done) => {
    runAs(actorOf(request), done);
  });
  app.addHook('onRequest', async (request, reply) => {
    try {
      return await checkRequest(request, reply);
    } catch (error) {
      // answered here: the queue dashboard's routes have an error handler of their own
      if (!(error instanceof PorterError)) throw error;
      return reply.status(error.httpStatus).send({ error: error.toJSON() });
    }
  });

  async function checkRequest(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply | undefined> {
    const access = request.routeOptions.config?.access ?? 'token';
    if (access === 'public') return undefined;
    const browserRoute = access === 'browser';
    const resolved = await resolve(context, request, options.token, browserRoute);
    if (!resolved) return refuseAnonymous(request, reply, browserRoute);
    if (resolved.session) checkCsrf(request, resolved.session, browserRoute);
    const { principal } = resolved;
    const actor = actorOf(request);
    actor.principal = principal;
    const rule = routeRule(request.method, request.routeOptions.url ?? request.url);
    if (!roleIncludes(principal.role, rule.role)) {
      throw new PorterError(
        'PORTER_FORBIDDEN',
        `this needs the ${rule.role} role; ${principal.name} has ${principal.role}`,
        { details: { needed: rule.role, role: principal.role } },
      );
    }
    if (principal.targets) {
      const target = await jobTargetOf(context, request);
      if (target !== undefined) checkTargetAllowed(target, principal);
    }
    return undefined;
  }
}

/** No principal: 401, or the dashboard's sign-in form for a browser asking for a page. */
function refuseAnonymous(
  request: FastifyRequest,
  reply: FastifyReply,
  browserRoute: boolean,
): FastifyReply {
  const wantsPage =
    browserRoute &&
    request.method === 'GET' &&
    /\btext\/html\b/.test(String(request.headers.accept ?? ''));
  if (wantsPage) {
    return reply
      .status(401)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(loginPage(`${BOARD_PATH}/login`));
  }
  throw new PorterError('PORTER_UNAUTHORIZED', 'send Authorization: Bearer <token>');
}
