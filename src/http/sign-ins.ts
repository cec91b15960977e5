/**
 * Signing in and failing to: a bad credential counts towards the failure limit of the client's
 * address (behind a trusted proxy, the address it names: PORTER_TRUST_PROXY) and of the stored
 * token presented, and is an audit event; a principal that signed in gets a session
 * (src/auth/sessions.ts) that lives no longer than what opened it (src/app/session-check.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { PorterContext } from '../app/context.js';
import { securityOf } from '../app/security.js';
import { sessionCheckOf } from '../app/session-check.js';
import { principalOfToken } from '../auth/bearer.js';
import { tokenSubject } from '../auth/failure-limit.js';
import type { OidcGrant } from '../auth/oidc.js';
import type { Principal } from '../auth/principal.js';
import { whoOf } from '../audit/audit-event.js';
import { newActionId } from '../audit/audit-log.js';
import { PorterError } from '../errors/porter-error.js';
import { actorOf } from './request-actor.js';

/** The principal of a presented token (PORTER_API_TOKEN or a stored one), if valid. */
export function tokenPrincipal(
  context: PorterContext,
  given: string,
  apiToken: string | undefined,
): Promise<Principal | undefined> {
  return principalOfToken(securityOf(context).tokens, given, apiToken);
}

/** What a failure counts against: the client's address, and the stored token presented. */
function subjectsOf(request: FastifyRequest, presented: string | undefined): string[] {
  const token = tokenSubject(presented);
  return token ? [request.ip, token] : [request.ip];
}

/** Counts a bad credential (the address's, the token's) and writes its audit event. */
export async function recordFailure(
  context: PorterContext,
  request: FastifyRequest,
  action: string,
  what: Record<string, unknown>,
  presented?: string,
): Promise<void> {
  const security = securityOf(context);
  const count = await security.failures.fail(...subjectsOf(request, presented));
  await security.audit.append({
    at: new Date().toISOString(),
    action,
    phase: 'done',
    actionId: newActionId(),
    who: whoOf(undefined),
    from: actorOf(request).from,
    what: { ...what, failuresThisMinute: count },
    result: { ok: false, outcome: 'refused', status: 401, code: 'PORTER_UNAUTHORIZED' },
  });
}

/** Refuses the attempt once its address, or the stored token it presents, failed too often. */
export async function checkFailureLimit(
  context: PorterContext,
  request: FastifyRequest,
  presented?: string,
): Promise<void> {
  if (await securityOf(context).failures.blocked(...subjectsOf(request, presented))) {
    throw new PorterError(
      'PORTER_RATE_LIMITED',
      'too many failed sign-ins or bad tokens from this address or for this token; wait a minute',
    );
  }
}

/**
 * Opens a session for a principal that just signed in (with `presented`: the token it gave, or
 * the provider's grant), and writes its audit event; the session's id.
 */
export async function signIn(
  context: PorterContext,
  request: FastifyRequest,
  principal: Principal,
  via: string,
  presented: { token?: string; oidc?: OidcGrant },
): Promise<string> {
  const security = securityOf(context);
  const { id } = await security.sessions.create(principal, sessionCheckOf(principal, presented));
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
