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
import type { PorterContext } from '../app/context.js';
import { securityOf } from '../app/security.js';
import { runAs } from '../auth/acting.js';
import type { Principal } from '../auth/principal.js';
import { roleIncludes } from '../auth/roles.js';
import { routeRule } from '../auth/route-roles.js';
import { csrfMatches, type Session } from '../auth/sessions.js';
import { checkTargetAllowed } from '../auth/target-limits.js';
import { PorterError } from '../errors/porter-error.js';
import { BOARD_PATH } from './access.js';
import { BOARD_COOKIE, cookieValue } from './board-session.js';
import { loginPage } from './login-page.js';
import { actorOf } from './request-actor.js';
import { checkFailureLimit, recordFailure, tokenPrincipal } from './sign-ins.js';
import { sessionPrincipal } from '../app/session-check.js';
import { jobTargetOf } from './job-target-of.js';
import { sendScimError } from './routes/scim.js';

/** Whether the request is for a SCIM route (/scim/v2/{target}/…). */
function isScimRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.url ?? '').startsWith('/scim/v2/');
}

/** The console's session cookie (OpenID Connect sign-in). */
export const SESSION_COOKIE = 'porter_session';
export const CSRF_HEADER = 'x-porter-csrf';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

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
    const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
    await checkFailureLimit(context, request, given);
    const principal = given ? await tokenPrincipal(context, given, apiToken) : undefined;
    if (!principal) {
      await recordFailure(
        context,
        request,
        'token.refused',
        { method: request.method, url: request.routeOptions.url },
        given,
      );
      throw new PorterError('PORTER_UNAUTHORIZED', 'send Authorization: Bearer <token>');
    }
    return { principal };
  }
  const { sessions } = securityOf(context);
  // the dashboard's cookie opens the dashboard only
  for (const name of browserRoute ? [SESSION_COOKIE, BOARD_COOKIE] : [SESSION_COOKIE]) {
    const id = cookieValue(request.headers.cookie, name);
    const session = await sessions.get(id);
    if (!session) continue;
    // a session lives no longer than the token or the provider's say that opened it
    const principal = await sessionPrincipal(context, id!, session, apiToken);
    if (principal) return { principal, session };
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
      // an identity provider reads SCIM error bodies
      if (isScimRoute(request)) return sendScimError(reply, error);
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
    if (principal.scimOnly && !isScimRoute(request)) throw scimOnlyRefusal(principal);
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
      if (rule.everyTarget) throw everyTargetRefusal(principal);
      const target = await jobTargetOf(context, request);
      if (target !== undefined) checkTargetAllowed(target, principal);
    }
    return undefined;
  }
}

/** A `--scim-only` token anywhere but the SCIM routes (the dashboard's sign-in form among them). */
export function scimOnlyRefusal(principal: Principal): PorterError {
  return new PorterError(
    'PORTER_FORBIDDEN',
    `${principal.name} opens the SCIM routes (/scim/v2/{target}/) only`,
    { details: { scimOnly: true } },
  );
}

/**
 * A route that shows every target at once (the queue dashboard, the audit trail) cannot leave
 * other targets out: a principal limited to some is refused it.
 */
export function everyTargetRefusal(principal: Principal): PorterError {
  const limits = principal.targets ?? [];
  return new PorterError(
    'PORTER_FORBIDDEN',
    `${principal.name} is limited to target${limits.length === 1 ? '' : 's'} ${limits.join(', ')}, and this shows every target's jobs and events; use /v1/imports, /v1/exports and /v1/migrations, which show its own`,
    { details: { allowed: limits } },
  );
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
