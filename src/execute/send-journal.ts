/**
 * Remembers, in Redis, which rows of an import were handed to the admin server, written
 * before each call. After a crash, a row in the journal without a result may have been
 * applied, so it is looked up before it is sent again.
 */
import type { Redis } from 'ioredis';

export class SendJournal {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  private key(importId: string): string {
    return `${this.prefix}:import:${importId}:sent`;
  }

  /** Records that these rows are about to be sent. */
  async markSent(importId: string, rows: readonly number[]): Promise<void> {
    if (rows.length === 0) return;
    const key = this.key(importId);
    await this.redis
      .multi()
      .sadd(key, ...rows.map(String))
      .expire(key, this.ttlSeconds)
      .exec();
  }

  /** Which of these rows were sent at least once before. */
  async sentAmong(importId: string, rows: readonly number[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const flags = await this.redis.smismember(this.key(importId), ...rows.map(String));
    return rows.filter((_, index) => flags[index] === 1);
  }

  async delete(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId));
  }
}
