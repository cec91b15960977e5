/**
 * Failed sign-ins and bad tokens, counted in Redis for a minute per subject: the client's address
 * (behind a proxy, the address the trusted proxy names: PORTER_TRUST_PROXY) and the stored token
 * a request presented. Past the limit, a subject's attempts are refused (PORTER_RATE_LIMITED)
 * before any credential is checked, so guessing tokens or passwords stays slow across every API
 * process, and one token guessed at from many addresses is slowed all the same.
 */
import type { Redis } from 'ioredis';

const WINDOW_SECONDS = 60;

export class FailureLimit {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perMinute: number,
  ) {}

  private key(subject: string): string {
    return `${this.prefix}:auth-failures:${subject}`;
  }

  /** Whether any of the subjects has failed too often in the last minute. */
  async blocked(...subjects: string[]): Promise<boolean> {
    // one GET each: the keys lie in different Cluster slots
    const counts = await Promise.all(subjects.map((subject) => this.redis.get(this.key(subject))));
    return counts.some((count) => Number(count ?? 0) >= this.perMinute);
  }

  /** Counts one failure of each subject; returns the most failures of one this minute. */
  async fail(...subjects: string[]): Promise<number> {
    let most = 0;
    for (const subject of subjects) {
      const key = this.key(subject);
      // each subject's key is its own (a Cluster slot each): one MULTI per key
      const [[, count]] = (await this.redis
        .multi()
        .incr(key)
        .expire(key, WINDOW_SECONDS, 'NX')
        .exec()) as [[unknown, number], unknown];
      most = Math.max(most, count);
    }
    return most;
  }
}

/** The failure subject of a presented stored token (`token:<id>`), if it has that shape. */
export function tokenSubject(presented: string | undefined): string | undefined {
  const match = /^porter_([0-9a-f]{16})_/.exec(presented ?? '');
  return match ? `token:${match[1]}` : undefined;
}
