/**
 * The stores of who may do what and who did: the audit trail, API tokens, browser sessions and
 * the failed sign-in limit, over the context's Redis and configuration.
 */
import { AuditLog } from '../audit/audit-log.js';
import { FailureLimit } from '../auth/failure-limit.js';
import { OidcSignIn, oidcSettings } from '../auth/oidc.js';
import { SessionStore } from '../auth/sessions.js';
import { TokenStore } from '../auth/token-store.js';
import type { PorterContext } from './context.js';

export interface Security {
  audit: AuditLog;
  tokens: TokenStore;
  sessions: SessionStore;
  failures: FailureLimit;
}

const made = new WeakMap<PorterContext, Security>();

/** The context's security stores, made once per context. */
export function securityOf(context: PorterContext): Security {
  const known = made.get(context);
  if (known) return known;
  const { redis, env } = context;
  const prefix = env.PORTER_PREFIX;
  const audit = new AuditLog({
    redis,
    prefix,
    retentionDays: env.PORTER_AUDIT_RETENTION_DAYS,
    file: env.PORTER_AUDIT_FILE,
  });
  const security: Security = {
    audit,
    tokens: new TokenStore(redis, prefix, audit),
    sessions: new SessionStore(redis, prefix, Math.round(env.PORTER_SESSION_HOURS * 3600)),
    failures: new FailureLimit(redis, prefix, env.PORTER_AUTH_FAILURES_PER_MINUTE),
  };
  made.set(context, security);
  return security;
}

const signIns = new WeakMap<PorterContext, OidcSignIn | undefined>();

/**
 * The context's OpenID Connect sign-in, or undefined when PORTER_OIDC_ISSUER is unset; made once
 * per context (it keeps the provider's discovered configuration). PORTER_CONFIG_INVALID when the
 * settings are incomplete.
 */
export function oidcOf(context: PorterContext): OidcSignIn | undefined {
  if (signIns.has(context)) return signIns.get(context);
  const settings = oidcSettings(context.env);
  const signIn = settings ? new OidcSignIn(settings) : undefined;
  signIns.set(context, signIn);
  return signIn;
}

/**
 * How principals can sign in to the API besides sessions: PORTER_API_TOKEN, stored tokens
 * (`porter tokens create`) or OpenID Connect. `porter api` refuses to start with none of them.
 */
export async function apiSignInWays(context: PorterContext): Promise<string[]> {
  const ways: string[] = [];
  if (context.env.PORTER_API_TOKEN) ways.push('PORTER_API_TOKEN');
  if (context.env.PORTER_OIDC_ISSUER) ways.push('OpenID Connect');
  if ((await securityOf(context).tokens.list()).length > 0) ways.push('stored tokens');
  return ways;
}
