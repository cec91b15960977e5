/**
 * Browser sessions (the console's OpenID Connect sign-in, the queue dashboard's token form): a
 * random id in an HttpOnly cookie, and in Redis only the sha256 of that id, holding the principal
 * and the session's CSRF token. Signing out deletes it; it expires on its own after its time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Principal } from './principal.js';

export interface Session {
  principal: Principal;
  /** Sent back by the console in `x-porter-csrf` with every request that changes state. */
  csrf: string;
  expiresAt: string;
}

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly ttlSeconds: number,
  ) {}

  private key(id: string): string {
    return `${this.prefix}:session:${createHash('sha256').update(id).digest('hex')}`;
  }

  /** A new session; the id goes in the cookie, never in Redis. */
  async create(principal: Principal): Promise<{ id: string; session: Session }> {
    const id = randomBytes(32).toString('base64url');
    const session: Session = {
      principal,
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: new Date(Date.now() + this.ttlSeconds * 1000).toISOString(),
    };
    await this.redis.set(this.key(id), JSON.stringify(session), 'EX', this.ttlSeconds);
    return { id, session };
  }

  async get(id: string | undefined): Promise<Session | undefined> {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const json = await this.redis.get(this.key(id));
    return json === null ? undefined : (JSON.parse(json) as Session);
  }

  async end(id: string | undefined): Promise<void> {
    if (id && /^[A-Za-z0-9_-]{43}$/.test(id)) await this.redis.del(this.key(id));
  }
}

/** Whether the header carries the session's CSRF token (constant-time). */
export function csrfMatches(session: Session, header: unknown): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(session.csrf);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
