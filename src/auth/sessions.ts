/**
 * Browser sessions (the console's OpenID Connect sign-in, the queue dashboard's token form): a
 * random id in an HttpOnly cookie, and in Redis only the sha256 of that id, holding the principal,
 * the session's CSRF token and how its principal is checked again (`check`). A session lives no
 * longer than what opened it: session-check (src/app) checks it on every use. Signing out deletes
 * it; it expires on its own after its time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Principal } from './principal.js';

/** How a session's principal is checked again while the session lives. */
export type SessionCheck =
  /** A stored token: the session ends once the token is revoked or expires. */
  | { kind: 'token'; tokenId: string }
  /** PORTER_API_TOKEN: the session ends once the API's token is another (session-seal's MAC). */
  | { kind: 'api-token'; mac: string }
  /**
   * An OpenID Connect sign-in: the role is asked of the provider again every
   * PORTER_OIDC_RECHECK_MINUTES with its tokens (sealed with the cookie's id); the session ends
   * when the provider no longer answers for the user or its groups map to no role.
   */
  | { kind: 'oidc'; checkedAt: string; sealed?: string };

export interface Session {
  principal: Principal;
  /** Sent back by the console in `x-porter-csrf` with every request that changes state. */
  csrf: string;
  expiresAt: string;
  /** Undefined for a session of an earlier version: it is ended, and its user signs in again. */
  check?: SessionCheck;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly ttlSeconds: number,
  ) {}

  private key(id: string): string {
    return `${this.prefix}:session:${createHash('sha256').update(id).digest('hex')}`;
  }

  /** A new session; the id goes in the cookie, never in Redis. `check` may depend on the id. */
  async create(
    principal: Principal,
    check: (id: string) => SessionCheck,
  ): Promise<{ id: string; session: Session }> {
    const id = randomBytes(32).toString('base64url');
    const session: Session = {
      principal,
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: new Date(Date.now() + this.ttlSeconds * 1000).toISOString(),
      check: check(id),
    };
    await this.redis.set(this.key(id), JSON.stringify(session), 'EX', this.ttlSeconds);
    return { id, session };
  }

  async get(id: string | undefined): Promise<Session | undefined> {
    if (!id || !ID_PATTERN.test(id)) return undefined;
    const json = await this.redis.get(this.key(id));
    return json === null ? undefined : (JSON.parse(json) as Session);
  }

  /** Writes the session again (a new role, a new check), keeping its expiry; false when gone. */
  async update(id: string, session: Session): Promise<boolean> {
    const written = await this.redis.set(this.key(id), JSON.stringify(session), 'KEEPTTL', 'XX');
    return written === 'OK';
  }

  /**
   * Whether this process may re-check the session now: one re-check at a time, per session, for
   * at most `seconds` unless released sooner.
   */
  async claimRecheck(id: string, seconds: number): Promise<boolean> {
    const claimed = await this.redis.set(`${this.key(id)}:recheck`, '1', 'EX', seconds, 'NX');
    return claimed === 'OK';
  }

  /** Ends this process's re-check of the session. */
  async releaseRecheck(id: string): Promise<void> {
    await this.redis.del(`${this.key(id)}:recheck`);
  }

  async end(id: string | undefined): Promise<void> {
    if (id && ID_PATTERN.test(id)) await this.redis.del(this.key(id));
  }
}

/** Whether the header carries the session's CSRF token (constant-time). */
export function csrfMatches(session: Session, header: unknown): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(session.csrf);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
