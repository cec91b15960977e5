/**
 * API tokens with a name, a role, optional target limits and an optional expiry. A token is
 * `porter_<id>_<secret>`: 32 random bytes of secret, of which only the sha256 is stored, compared
 * in constant time. The token itself is shown once, when created. Creating or revoking a token
 * and its audit event are one Redis step (MULTI): both keys carry the `{security}` hash tag, so
 * the MULTI holds on a Redis Cluster too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { AuditEvent } from '../audit/audit-event.js';
import { securityKey } from '../redis/key-tags.js';
import type { Principal } from './principal.js';
import type { Role } from './roles.js';

export interface TokenInfo {
  id: string;
  name: string;
  role: Role;
  targets?: string[];
  /** It opens the SCIM routes of its targets and nothing else (`--scim-only`). */
  scimOnly?: boolean;
  /** ISO time after which the token is refused. */
  expiresAt?: string;
  createdAt: string;
  createdBy: string;
}

interface StoredToken extends TokenInfo {
  /** sha256 of the secret, hex. */
  hash: string;
}

const TOKEN_PATTERN = /^porter_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Whether the text has the shape of a stored token (rather than PORTER_API_TOKEN). */
export function looksLikeStoredToken(text: string): boolean {
  return TOKEN_PATTERN.test(text);
}

export class TokenStore {
  private readonly key: string;
  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly audit: AuditLog,
  ) {
    this.key = securityKey(prefix, 'tokens');
  }

  /** Creates a token; returns it (shown once) and what is kept of it. */
  async create(
    init: { name: string; role: Role; targets?: string[]; scimOnly?: boolean; expiresAt?: Date },
    event: Omit<AuditEvent, 'what' | 'action' | 'phase' | 'result'>,
  ): Promise<{ token: string; info: TokenInfo }> {
    if (!NAME_PATTERN.test(init.name)) {
      throw new PorterError(
        'PORTER_USAGE',
        '--name: letters, digits, ".", "_", "@" and "-", at most 64, starting with a letter or digit',
      );
    }
    // names differ by more than case: four eyes takes `Wally` and `wally` for one principal
    const taken = (await this.list()).find(
      (token) => token.name.toLowerCase() === init.name.toLowerCase(),
    );
    if (taken) {
      throw new PorterError(
        'PORTER_CONFLICT',
        `a token named "${taken.name}" exists; revoke it first, or choose a name that differs by more than case`,
      );
    }
    const id = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const info: TokenInfo = {
      id,
      name: init.name,
      role: init.role,
      ...(init.targets && init.targets.length > 0 ? { targets: init.targets } : {}),
      ...(init.scimOnly ? { scimOnly: true } : {}),
      ...(init.expiresAt ? { expiresAt: init.expiresAt.toISOString() } : {}),
      createdAt: new Date().toISOString(),
      createdBy: event.who.name,
    };
    const stored: StoredToken = { ...info, hash: sha256(secret).toString('hex') };
    const audited: AuditEvent = {
      ...event,
      action: 'token.create',
      phase: 'done',
      what: {
        tokenId: id,
        name: info.name,
        role: info.role,
        targets: info.targets,
        scimOnly: info.scimOnly,
        expiresAt: info.expiresAt,
      },
      result: { ok: true },
    };
    const chain = this.redis.multi().hset(this.key, id, JSON.stringify(stored));
    await this.audit.addTo(chain, audited).exec();
    await this.audit.copyToFile(audited);
    return { token: `porter_${id}_${secret}`, info };
  }

  /** Every token, without its hash, oldest first. */
  async list(): Promise<TokenInfo[]> {
    const all = await this.redis.hgetall(this.key);
    return Object.values(all)
      .map((json) => withoutHash(JSON.parse(json) as StoredToken))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Revokes the token of that id or name; PORTER_NOT_FOUND when none. */
  async revoke(
    idOrName: string,
    event: Omit<AuditEvent, 'what' | 'action' | 'phase' | 'result'>,
  ): Promise<TokenInfo> {
    const token = (await this.list()).find((t) => t.id === idOrName || t.name === idOrName);
    if (!token) throw new PorterError('PORTER_NOT_FOUND', `no token ${idOrName}`);
    const audited: AuditEvent = {
      ...event,
      action: 'token.revoke',
      phase: 'done',
      what: { tokenId: token.id, name: token.name, role: token.role },
      result: { ok: true },
    };
    const chain = this.redis.multi().hdel(this.key, token.id);
    await this.audit.addTo(chain, audited).exec();
    await this.audit.copyToFile(audited);
    return token;
  }

  /** The principal of a presented token, or undefined when it is unknown, wrong or expired. */
  async verify(presented: string, nowMs = Date.now()): Promise<Principal | undefined> {
    const match = TOKEN_PATTERN.exec(presented);
    if (!match) return undefined;
    const stored = await this.stored(match[1]!);
    if (!stored) return undefined;
    const expected = Buffer.from(stored.hash, 'hex');
    const given = sha256(match[2]!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    return principalOf(stored, nowMs);
  }

  /**
   * The principal of the token of this id as it stands now (a session opened with it asks on each
   * use), or undefined once it is revoked or expired.
   */
  async current(tokenId: string, nowMs = Date.now()): Promise<Principal | undefined> {
    const stored = await this.stored(tokenId);
    return stored ? principalOf(stored, nowMs) : undefined;
  }

  private async stored(tokenId: string): Promise<StoredToken | undefined> {
    if (!/^[0-9a-f]{16}$/.test(tokenId)) return undefined;
    const json = await this.redis.hget(this.key, tokenId);
    return json === null ? undefined : (JSON.parse(json) as StoredToken);
  }
}

function principalOf(stored: StoredToken, nowMs: number): Principal | undefined {
  if (stored.expiresAt !== undefined && Date.parse(stored.expiresAt) <= nowMs) return undefined;
  return {
    name: `token:${stored.name}`,
    role: stored.role,
    via: 'token',
    tokenId: stored.id,
    ...(stored.targets ? { targets: stored.targets } : {}),
    ...(stored.scimOnly ? { scimOnly: true } : {}),
  };
}

function withoutHash(stored: StoredToken): TokenInfo {
  const { hash: _hash, ...info } = stored;
  return info;
}

/** `30d`, `12h`, `90m` or an ISO date: when a token expires. */
export function parseExpiry(text: string, now = new Date()): Date {
  const match = /^(\d{1,5})([dhm])$/.exec(text.trim());
  if (match) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
    return new Date(now.getTime() + Number(match[1]) * unit);
  }
  const date = new Date(text);
  if (Number.isNaN(date.getTime()) || date.getTime() <= now.getTime()) {
    throw new PorterError(
      'PORTER_USAGE',
      `--expires: a duration such as 30d, 12h or 90m, or a future date, not "${text}"`,
    );
  }
  return date;
}
