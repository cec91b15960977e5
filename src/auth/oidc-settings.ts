/**
 * The settings of the console's OpenID Connect sign-in (PORTER_OIDC_*), and what a provider's
 * claims make of a user: the role, from a claim (PORTER_OIDC_ROLE_CLAIM, `groups` by default)
 * through PORTER_OIDC_ROLE_MAP, and the principal, named after the issuer and the subject (`sub`),
 * which the provider never reassigns, unlike an email address a user may change. The name claim
 * (PORTER_OIDC_NAME_CLAIM) is only shown beside it.
 */
import type { Env } from '../config/env.js';
import { PorterError } from '../errors/porter-error.js';
import type { Principal } from './principal.js';
import { parseRole, roleIncludes, type Role } from './roles.js';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  redirectUrl: string;
  scopes: string;
  roleClaim: string;
  nameClaim: string;
  roleMap: ReadonlyMap<string, Role>;
  allowHttp: boolean;
  /** Seconds between two checks of a session's role with the provider. */
  recheckSeconds: number;
}

/** The sign-in's settings, or undefined when PORTER_OIDC_ISSUER is unset. */
export function oidcSettings(env: Env): OidcSettings | undefined {
  if (!env.PORTER_OIDC_ISSUER) return undefined;
  if (!env.PORTER_OIDC_CLIENT_ID || !env.PORTER_OIDC_REDIRECT_URL) {
    throw new PorterError(
      'PORTER_CONFIG_INVALID',
      'PORTER_OIDC_ISSUER needs PORTER_OIDC_CLIENT_ID and PORTER_OIDC_REDIRECT_URL',
    );
  }
  return {
    issuer: env.PORTER_OIDC_ISSUER,
    clientId: env.PORTER_OIDC_CLIENT_ID,
    clientSecret: env.PORTER_OIDC_CLIENT_SECRET,
    redirectUrl: env.PORTER_OIDC_REDIRECT_URL,
    scopes: env.PORTER_OIDC_SCOPES,
    roleClaim: env.PORTER_OIDC_ROLE_CLAIM,
    nameClaim: env.PORTER_OIDC_NAME_CLAIM,
    roleMap: parseRoleMap(env.PORTER_OIDC_ROLE_MAP ?? ''),
    allowHttp: env.PORTER_OIDC_ALLOW_HTTP,
    recheckSeconds: Math.round(env.PORTER_OIDC_RECHECK_MINUTES * 60),
  };
}

/** `porter-admins=admin,dam-ops=operator` → claim value → role. */
export function parseRoleMap(text: string): Map<string, Role> {
  const map = new Map<string, Role>();
  for (const pair of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const equals = pair.lastIndexOf('=');
    if (equals <= 0) {
      throw new PorterError(
        'PORTER_CONFIG_INVALID',
        `PORTER_OIDC_ROLE_MAP: "${pair}" is not value=role`,
      );
    }
    map.set(
      pair.slice(0, equals).trim(),
      parseRole(pair.slice(equals + 1).trim(), 'PORTER_OIDC_ROLE_MAP'),
    );
  }
  return map;
}

/** The highest role the claim's values map to, if any. */
export function roleFromClaim(
  claim: unknown,
  roleMap: ReadonlyMap<string, Role>,
): Role | undefined {
  const values = Array.isArray(claim)
    ? claim
    : typeof claim === 'string'
      ? claim.split(/[\s,]+/)
      : [];
  let best: Role | undefined;
  for (const value of values) {
    const role = typeof value === 'string' ? roleMap.get(value) : undefined;
    if (role && (!best || roleIncludes(role, best))) best = role;
  }
  return best;
}

/** `oidc:<sub>@<issuer host and path>`: one name per person of one provider, for good. */
export function oidcPrincipalName(issuer: string, subject: string): string {
  const url = new URL(issuer);
  return `oidc:${subject}@${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The principal the claims make (an ID token's, or the userinfo's), or PORTER_FORBIDDEN when
 * its groups map to no role.
 */
export function oidcPrincipal(
  settings: OidcSettings,
  subject: string,
  claims: Readonly<Record<string, unknown>>,
): Principal {
  const name = oidcPrincipalName(settings.issuer, subject);
  const shown = claims[settings.nameClaim];
  const display = typeof shown === 'string' && shown !== '' ? shown.slice(0, 200) : undefined;
  const role = roleFromClaim(claims[settings.roleClaim], settings.roleMap);
  if (!role) {
    throw new PorterError(
      'PORTER_FORBIDDEN',
      `${display ?? name} has no porter role: none of its ${settings.roleClaim} is in PORTER_OIDC_ROLE_MAP`,
    );
  }
  return { name, role, via: 'oidc', ...(display ? { display } : {}) };
}
