/**
 * A browser session lives no longer than what opened it. On every use, its principal is checked
 * again (src/auth/sessions.ts `SessionCheck`): a session opened with a stored token ends from the
 * next request once the token is revoked or expires, and takes the token's role and limits as
 * they stand; one opened with PORTER_API_TOKEN ends once the API's token is another; an OpenID
 * Connect session asks the provider again every PORTER_OIDC_RECHECK_MINUTES, takes the role its
 * groups give now, and ends when they give none or the provider cannot be asked. A session with
 * nothing to check it by (from an earlier version) ends.
 */
import type { OidcGrant, OidcSignedIn, OidcSignIn } from '../auth/oidc.js';
import { API_TOKEN_PRINCIPAL, type Principal } from '../auth/principal.js';
import { seal, sessionMac, unseal } from '../auth/session-seal.js';
import type { Session, SessionCheck } from '../auth/sessions.js';
import type { PorterContext } from './context.js';
import { oidcOf, securityOf } from './security.js';

/** Seconds one process keeps a session's re-check to itself; others use the role it has. */
const RECHECK_CLAIM_SECONDS = 30;

/** How a session opened by `principal` (with `presented`, the token given) is checked later. */
export function sessionCheckOf(
  principal: Principal,
  presented: { token?: string; oidc?: OidcGrant },
): (sessionId: string) => SessionCheck {
  return (sessionId) => {
    if (principal.via === 'token' && principal.tokenId) {
      return { kind: 'token', tokenId: principal.tokenId };
    }
    if (principal.via === 'api-token' && presented.token !== undefined) {
      return { kind: 'api-token', mac: sessionMac(sessionId, presented.token) };
    }
    return {
      kind: 'oidc',
      checkedAt: new Date().toISOString(),
      ...(presented.oidc ? { sealed: seal(sessionId, JSON.stringify(presented.oidc)) } : {}),
    };
  };
}

/**
 * The principal the session stands for now, or undefined when it has ended (it is then deleted).
 * `apiToken` is this process's PORTER_API_TOKEN.
 */
export async function sessionPrincipal(
  context: PorterContext,
  sessionId: string,
  session: Session,
  apiToken: string | undefined,
): Promise<Principal | undefined> {
  const { sessions, tokens } = securityOf(context);
  const check = session.check;
  let principal: Principal | undefined;
  if (check?.kind === 'token') {
    principal = await tokens.current(check.tokenId);
  } else if (check?.kind === 'api-token') {
    const same = apiToken !== undefined && sessionMac(sessionId, apiToken) === check.mac;
    principal = same ? API_TOKEN_PRINCIPAL : undefined;
  } else if (check?.kind === 'oidc') {
    principal = await oidcPrincipalNow(context, sessionId, session, check);
  }
  if (!principal) {
    await sessions.end(sessionId);
    return undefined;
  }
  return principal;
}

async function oidcPrincipalNow(
  context: PorterContext,
  sessionId: string,
  session: Session,
  check: Extract<SessionCheck, { kind: 'oidc' }>,
): Promise<Principal | undefined> {
  const oidc = oidcOf(context);
  if (!oidc) return undefined;
  const dueMs = Date.parse(check.checkedAt) + oidc.settings.recheckSeconds * 1000;
  if (Date.now() < dueMs) return session.principal;
  const { sessions } = securityOf(context);
  // one re-check at a time: a refresh token used twice at once may be refused the second time
  if (!(await sessions.claimRecheck(sessionId, RECHECK_CLAIM_SECONDS))) return session.principal;
  try {
    return await recheckWithProvider(context, oidc, sessionId, session, check);
  } finally {
    await sessions.releaseRecheck(sessionId);
  }
}

async function recheckWithProvider(
  context: PorterContext,
  oidc: OidcSignIn,
  sessionId: string,
  session: Session,
  check: Extract<SessionCheck, { kind: 'oidc' }>,
): Promise<Principal | undefined> {
  const opened = check.sealed === undefined ? undefined : unseal(sessionId, check.sealed);
  if (opened === undefined) return undefined;
  let now: OidcSignedIn;
  try {
    now = await oidc.recheck(JSON.parse(opened) as OidcGrant);
  } catch (error) {
    context.logger.info(
      { err: error, principal: session.principal.name },
      'a console session ends: its role could not be checked again with the provider',
    );
    return undefined;
  }
  await securityOf(context).sessions.update(sessionId, {
    ...session,
    principal: now.principal,
    check: {
      kind: 'oidc',
      checkedAt: new Date().toISOString(),
      sealed: seal(sessionId, JSON.stringify(now.grant)),
    },
  });
  return now.principal;
}
