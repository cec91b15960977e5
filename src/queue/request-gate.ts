/**
 * One gate every worker's admin requests pass through, kept in Redis so it holds across
 * processes and machines: at most `maxPerSecond` requests per second in all (0 = no cap), and
 * after a 429 every worker waits out the server's Retry-After before its next request.
 */
import type { Redis } from 'ioredis';
import { sleep } from '../execute/retry-policy.js';
import { hashTag } from '../redis/key-tags.js';

/**
 * A sliding one-second window on Redis's own clock (the same for every worker and machine):
 * takes a slot and returns 0, or returns how many milliseconds until the oldest slot leaves
 * the window. No second ever sees more than the cap, across second boundaries too.
 */
const TAKE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1000)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, time[1] .. time[2] .. ':' .. redis.call('INCR', KEYS[2]))
  redis.call('PEXPIRE', KEYS[1], 2000)
  redis.call('PEXPIRE', KEYS[2], 2000)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + 1000 - now)
`;

const PAUSE_AT_LEAST = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
`;

export interface RequestGateStats {
  /** Requests that waited for a 429 back-off set by any worker. */
  backoffWaits: number;
  /** Requests that waited for a slot under the cap. */
  capWaits: number;
}

export class RequestGate {
  readonly stats: RequestGateStats = { backoffWaits: 0, capWaits: 0 };
  private readonly pauseKey: string;
  private readonly windowKey: string;

  /** `scope` names the admin server (a target): each server has its own cap and back-off. */
  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly maxPerSecond = 0,
    scope = 'default',
  ) {
    // one Cluster slot per target: the window script takes the window and its counter
    this.pauseKey = `${prefix}:admin-gate:${hashTag(scope)}:paused`;
    this.windowKey = `${prefix}:admin-gate:${hashTag(scope)}:window`;
  }

  /** Waits until a request may go: no back-off in force, and a slot left in the last second. */
  async beforeRequest(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const pausedFor = await this.redis.pttl(this.pauseKey);
      if (pausedFor > 0) {
        this.stats.backoffWaits++;
        await sleep(pausedFor, signal);
        continue;
      }
      if (this.maxPerSecond <= 0) return;
      const waitMs = Number(
        await this.redis.eval(
          TAKE_SLOT,
          2,
          this.windowKey,
          `${this.windowKey}:seq`,
          this.maxPerSecond,
        ),
      );
      if (waitMs === 0) return;
      this.stats.capWaits++;
      await sleep(waitMs + Math.floor(Math.random() * 5), signal);
    }
  }

  /** Milliseconds left of the back-off in force (0 when requests may go). */
  async pausedFor(): Promise<number> {
    return Math.max(0, await this.redis.pttl(this.pauseKey));
  }

  /** Makes every worker wait `ms` before its next request (the longest back-off wins). */
  async pauseAll(ms: number): Promise<void> {
    if (ms <= 0) return;
    await this.redis.eval(PAUSE_AT_LEAST, 1, this.pauseKey, Math.ceil(ms));
  }
}
