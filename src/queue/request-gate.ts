/**
 * One gate every worker's admin requests pass through, kept in Redis so it holds across
 * processes and machines: at most `maxPerSecond` requests per second in all (0 = no cap), and
 * after a 429 every worker waits out the server's Retry-After before its next request.
 */
import type { Redis } from 'ioredis';
import { sleep } from '../execute/retry-policy.js';

const TAKE_SLOT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], 2000) end
return count
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
  /** Requests that waited for the next second under the cap. */
  capWaits: number;
}

export class RequestGate {
  readonly stats: RequestGateStats = { backoffWaits: 0, capWaits: 0 };
  private readonly pauseKey: string;
  private readonly windowKey: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly maxPerSecond = 0,
  ) {
    this.pauseKey = `${prefix}:admin-gate:paused`;
    this.windowKey = `${prefix}:admin-gate:second`;
  }

  /** Waits until a request may go: no back-off in force, and a slot left in this second. */
  async beforeRequest(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const pausedFor = await this.redis.pttl(this.pauseKey);
      if (pausedFor > 0) {
        this.stats.backoffWaits++;
        await sleep(pausedFor, signal);
        continue;
      }
      if (this.maxPerSecond <= 0) return;
      const now = Date.now();
      const second = Math.floor(now / 1000);
      const taken = Number(await this.redis.eval(TAKE_SLOT, 1, `${this.windowKey}:${second}`));
      if (taken <= this.maxPerSecond) return;
      this.stats.capWaits++;
      await sleep(1000 - (now % 1000) + Math.floor(Math.random() * 20), signal);
    }
  }

  /** Makes every worker wait `ms` before its next request (the longest back-off wins). */
  async pauseAll(ms: number): Promise<void> {
    if (ms <= 0) return;
    await this.redis.eval(PAUSE_AT_LEAST, 1, this.pauseKey, Math.ceil(ms));
  }
}
