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
import { KeyedSerial } from '../util/keyed-serial.js';

/** Seconds one process keeps a session's re-check to itself, at most (a process that died). */
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
  const due = (at: string): boolean =>
    Date.now() >= Date.parse(at) + oidc.settings.recheckSeconds * 1000;
  if (!due(check.checkedAt)) return session.principal;
  // one re-check at a time per session: a refresh token used twice at once may be refused the
  // second time. A request that meets one in progress waits for it, then reads the session as
  // it left it (re-checking again if it is due still), never the role from before
  return rechecks.run(`${context.env.PORTER_PREFIX}\n${sessionId}`, async () => {
    const { sessions } = securityOf(context);
    const current = await sessions.get(sessionId);
    if (current?.check?.kind !== 'oidc') return undefined;
    if (!due(current.check.checkedAt)) return current.principal;
    if (!(await claimRecheck(context, sessionId))) return current.principal;
    try {
      return await recheckWithProvider(context, oidc, sessionId, current, current.check);
    } finally {
      await sessions.releaseRecheck(sessionId);
    }
  });
}

/** Re-checks in progress in this process, per session. */
const rechecks = new KeyedSerial<string>();

/** How long a request waits for another process's re-check of its session, at most. */
const RECHECK_WAIT_MS = 5_000;
const RECHECK_POLL_MS = 50;

/**
 * This process's claim on the session's re-check; while another process holds it, waits for it
 * to end (up to RECHECK_WAIT_MS). False when the other still holds it then: the session's role
 * as last checked is used.
 */
async function claimRecheck(context: PorterContext, sessionId: string): Promise<boolean> {
  const { sessions } = securityOf(context);
  const until = Date.now() + RECHECK_WAIT_MS;
  for (;;) {
    if (await sessions.claimRecheck(sessionId, RECHECK_CLAIM_SECONDS)) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, RECHECK_POLL_MS));
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
