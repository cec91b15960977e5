/**
 * How many SCIM deletes and deactivations a target still takes this hour: a sliding hour of
 * the removals applied, per target, in one Redis sorted set. A removal reserves its place before
 * it is sent (so requests at the same time cannot pass the limit together) and gives it back
 * when it was not applied.
 */
import type { Redis } from 'ioredis';
import { hashTag } from '../redis/key-tags.js';

export const REMOVAL_WINDOW_MS = 60 * 60 * 1000;

/** KEYS: the set; ARGV: now, limit, member. 1 = reserved, 0 = the hour is full. */
const RESERVE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${REMOVAL_WINDOW_MS})
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ${REMOVAL_WINDOW_MS})
return 1
`;

export class RemovalBudget {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(target: string): string {
    return `${this.prefix}:scim:${hashTag(target)}:removals`;
  }

  /** A place for one removal within `limit` per hour: its member, or undefined when full. */
  async reserve(target: string, limit: number, now = Date.now()): Promise<string | undefined> {
    const member = `${now}:${Math.random().toString(36).slice(2)}`;
    const reply = await this.redis.eval(RESERVE, 1, this.key(target), now, limit, member);
    return reply === 1 ? member : undefined;
  }

  /** Gives back a place whose removal was not applied. */
  async giveBack(target: string, member: string): Promise<void> {
    await this.redis.zrem(this.key(target), member);
  }
}
