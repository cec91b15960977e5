/**
 * Failed sign-ins and bad tokens per address, counted in Redis for a minute: past the limit, the
 * address's attempts are refused (PORTER_RATE_LIMITED) before any credential is checked, so
 * guessing tokens or passwords stays slow across every API process.
 */
import type { Redis } from 'ioredis';

const WINDOW_SECONDS = 60;

export class FailureLimit {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perMinute: number,
  ) {}

  private key(address: string): string {
    return `${this.prefix}:auth-failures:${address}`;
  }

  /** Whether the address has failed too often in the last minute. */
  async blocked(address: string): Promise<boolean> {
    const count = Number((await this.redis.get(this.key(address))) ?? 0);
    return count >= this.perMinute;
  }

  /** Counts one failure; returns the address's failures this minute. */
  async fail(address: string): Promise<number> {
    const key = this.key(address);
    const [[, count]] = (await this.redis
      .multi()
      .incr(key)
      .expire(key, WINDOW_SECONDS, 'NX')
      .exec()) as [[unknown, number], unknown];
    return count;
  }
}
