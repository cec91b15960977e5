/**
 * The console's sign-in with the organisation's OpenID Connect provider: the authorisation code
 * flow with PKCE (openid-client). The state, nonce and code verifier of a sign-in in progress
 * wait in Redis for ten minutes, so any API process can take the callback. The role comes from a
 * claim (PORTER_OIDC_ROLE_CLAIM, `groups` by default) through PORTER_OIDC_ROLE_MAP; a user whose
 * claim maps to no role is refused.
 */
import * as client from 'openid-client';
import type { Redis } from 'ioredis';
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

interface Pending {
  verifier: string;
  nonce: string;
}

const PENDING_SECONDS = 600;

export class OidcSignIn {
  private configuration?: Promise<client.Configuration>;

  constructor(
    readonly settings: OidcSettings,
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private config(): Promise<client.Configuration> {
    this.configuration ??= client
      .discovery(
        new URL(this.settings.issuer),
        this.settings.clientId,
        this.settings.clientSecret,
        this.settings.clientSecret ? undefined : client.None(),
        this.settings.allowHttp ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  private pendingKey(state: string): string {
    return `${this.prefix}:oidc-pending:${state}`;
  }

  /** Where to send the browser to sign in. */
  async start(): Promise<URL> {
    const config = await this.config();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const pending: Pending = { verifier, nonce };
    await this.redis.set(this.pendingKey(state), JSON.stringify(pending), 'EX', PENDING_SECONDS);
    return client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
  }

  /** The principal of a callback (`callbackUrl` as the browser asked for it). */
  async finish(callbackUrl: URL): Promise<Principal> {
    const config = await this.config();
    const state = callbackUrl.searchParams.get('state') ?? '';
    const json = state ? await this.redis.getdel(this.pendingKey(state)) : null;
    if (json === null) {
      throw new PorterError(
        'PORTER_UNAUTHORIZED',
        'this sign-in is unknown or took too long; sign in again',
      );
    }
    const pending = JSON.parse(json) as Pending;
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.verifier,
      expectedState: state,
      expectedNonce: pending.nonce,
    });
    const claims = tokens.claims();
    if (!claims) throw new PorterError('PORTER_UNAUTHORIZED', 'the provider sent no ID token');
    const who =
      typeof claims[this.settings.nameClaim] === 'string'
        ? String(claims[this.settings.nameClaim])
        : claims.sub;
    const role = roleFromClaim(claims[this.settings.roleClaim], this.settings.roleMap);
    if (!role) {
      throw new PorterError(
        'PORTER_FORBIDDEN',
        `oidc:${who} has no porter role: none of its ${this.settings.roleClaim} is in PORTER_OIDC_ROLE_MAP`,
      );
    }
    return { name: `oidc:${who}`, role, via: 'oidc' };
  }
}
