/**
 * The console's sign-in with the organisation's OpenID Connect provider: the authorisation code
 * flow with PKCE (openid-client). A sign-in in progress is bound to the browser that started it:
 * its state, nonce and code verifier travel in a short-lived cookie of that browser (the
 * `pending` value), never in Redis, so a callback opened in another browser is refused (no login
 * CSRF), and any API process takes the callback. A session's role is asked of the provider again
 * later (`recheck`): with the refresh token when it gave one, else the userinfo endpoint while the
 * access token lasts; when neither answers, the session cannot be checked and ends.
 */
import { timingSafeEqual } from 'node:crypto';
import type * as OpenId from 'openid-client';
import { PorterError } from '../errors/porter-error.js';
import { oidcPrincipal, type OidcSettings } from './oidc-settings.js';
import type { Principal } from './principal.js';

export { oidcSettings, type OidcSettings } from './oidc-settings.js';

/** The OpenID Connect client, loaded on a sign-in's first use: most commands never sign anyone in. */
const openidClient = (): Promise<typeof OpenId> => import('openid-client');

/** What the provider gave to ask it again: kept sealed with the session (session-seal.ts). */
export interface OidcGrant {
  /** The subject the provider signed in. */
  sub: string;
  accessToken?: string;
  /** When the access token expires, in ms since the epoch. */
  accessExpiresAt?: number;
  refreshToken?: string;
}

export interface OidcSignedIn {
  principal: Principal;
  grant: OidcGrant;
}

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  /** When the sign-in started, in ms since the epoch. */
  at: number;
}

/** How long a sign-in may take at the provider, in seconds (the pre-sign-in cookie's life). */
export const PENDING_SECONDS = 600;

function unauthorized(): PorterError {
  return new PorterError(
    'PORTER_UNAUTHORIZED',
    'this sign-in was not started in this browser, or took too long; sign in again',
  );
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The pre-sign-in cookie's value read back, or undefined when it is not one. */
function readPending(value: string | undefined, nowMs: number): Pending | undefined {
  if (!value || value.length > 1024) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const pending = parsed as Partial<Pending>;
  if (
    typeof pending.state !== 'string' ||
    typeof pending.nonce !== 'string' ||
    typeof pending.verifier !== 'string' ||
    typeof pending.at !== 'number' ||
    nowMs - pending.at > PENDING_SECONDS * 1000 ||
    pending.at > nowMs + 60_000
  ) {
    return undefined;
  }
  return pending as Pending;
}

function grantOf(
  sub: string,
  tokens: OpenId.TokenEndpointResponse & OpenId.TokenEndpointResponseHelpers,
  earlierRefresh?: string,
): OidcGrant {
  const expiresIn = tokens.expiresIn();
  const refreshToken = tokens.refresh_token ?? earlierRefresh;
  return {
    sub,
    accessToken: tokens.access_token,
    ...(expiresIn !== undefined ? { accessExpiresAt: Date.now() + expiresIn * 1000 } : {}),
    ...(refreshToken ? { refreshToken } : {}),
  };
}

export class OidcSignIn {
  private configuration?: Promise<OpenId.Configuration>;

  constructor(readonly settings: OidcSettings) {}

  private config(): Promise<OpenId.Configuration> {
    this.configuration ??= openidClient()
      .then((client) =>
        client.discovery(
          new URL(this.settings.issuer),
          this.settings.clientId,
          this.settings.clientSecret,
          this.settings.clientSecret ? undefined : client.None(),
          this.settings.allowHttp ? { execute: [client.allowInsecureRequests] } : undefined,
        ),
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  /** Where to send the browser to sign in, and the pre-sign-in cookie's value to set with it. */
  async start(): Promise<{ url: URL; pending: string }> {
    const config = await this.config();
    const client = await openidClient();
    const pending: Pending = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      at: Date.now(),
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url, pending: Buffer.from(JSON.stringify(pending)).toString('base64url') };
  }

  /**
   * The principal of a callback (`callbackUrl` as the browser asked for it), which must come
   * with the pre-sign-in cookie of the browser that started the sign-in (`pending`).
   */
  async finish(callbackUrl: URL, pending: string | undefined): Promise<OidcSignedIn> {
    const started = readPending(pending, Date.now());
    const state = callbackUrl.searchParams.get('state') ?? '';
    if (!started || !sameText(state, started.state)) throw unauthorized();
    const config = await this.config();
    const client = await openidClient();
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
    });
    const claims = tokens.claims();
    if (!claims) throw new PorterError('PORTER_UNAUTHORIZED', 'the provider sent no ID token');
    return {
      principal: oidcPrincipal(this.settings, claims.sub, claims),
      grant: grantOf(claims.sub, tokens),
    };
  }

  /**
   * The user's principal as the provider sees it now, with the grant to ask it next time; throws
   * when the provider refuses (the user left, the grant was revoked) or cannot be asked (no
   * refresh token, and the access token expired): the session then ends.
   */
  async recheck(grant: OidcGrant): Promise<OidcSignedIn> {
    const config = await this.config();
    const client = await openidClient();
    let next = grant;
    let claims: Record<string, unknown> | undefined;
    if (grant.refreshToken) {
      const tokens = await client.refreshTokenGrant(config, grant.refreshToken);
      next = grantOf(grant.sub, tokens, grant.refreshToken);
      const fresh = tokens.claims();
      if (fresh && fresh.sub !== grant.sub) throw unauthorized();
      if (fresh && fresh[this.settings.roleClaim] !== undefined) claims = fresh;
    }
    if (!claims) {
      if (!next.accessToken || (next.accessExpiresAt ?? Infinity) <= Date.now()) {
        throw new PorterError(
          'PORTER_UNAUTHORIZED',
          'the provider can no longer be asked for this session (no refresh token, and its access token expired); sign in again',
        );
      }
      claims = await client.fetchUserInfo(config, next.accessToken, grant.sub);
    }
    return { principal: oidcPrincipal(this.settings, grant.sub, claims), grant: next };
  }
}
