/**
 * Where an import keeps, per record it changed, what undoing it needs (src/plan/undo-entry.ts):
 * one hash `<p>:import:<id>:undo` of entries kept a bucket of 64 rows at a time
 * (row-buckets.ts), with the import's TTL. Only changed records have an entry, so it holds about
 * as much as the import changed.
 */
import type { Redis } from 'ioredis';
import { importKeys } from './import-keys.js';
import { appendEntries, readBuckets } from './row-buckets.js';

/** Buckets read per round trip (64 rows each). */
const READ_BUCKETS = 16;

export class UndoLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  key(importId: string): string {
    return importKeys(this.prefix, importId).undo;
  }

  /** Keeps these entries (row → encoded entry); keeping a row again replaces it. */
  async keep(importId: string, entries: ReadonlyMap<number, string>): Promise<void> {
    await appendEntries(this.redis, this.key(importId), entries, this.ttlSeconds);
  }

  /** Whether the import changed any record (kept an entry). */
  async isEmpty(importId: string): Promise<boolean> {
    return (await this.redis.hlen(this.key(importId))) === 0;
  }

  /**
   * The entries in row order: the buckets are listed first (a field per 64 rows), then read a
   * few at a time.
   */
  async *entries(importId: string): AsyncGenerator<{ row: number; text: string }> {
    const key = this.key(importId);
    const buckets = new Set<number>();
    let cursor = '0';
    do {
      // the values are frames and text: read as bytes, never decoded here
      const [next, flat] = await this.redis.hscanBuffer(key, cursor, 'COUNT', READ_BUCKETS);
      for (let index = 0; index < flat.length; index += 2)
        buckets.add(Number(flat[index]!.toString('latin1').slice(1)));
      cursor = next.toString('latin1');
    } while (cursor !== '0');
    const ordered = [...buckets].sort((left, right) => left - right);
    for (let start = 0; start < ordered.length; start += READ_BUCKETS) {
      const found = await readBuckets(this.redis, key, ordered.slice(start, start + READ_BUCKETS));
      const rows = [...found.keys()].sort((left, right) => left - right);
      for (const row of rows) yield { row, text: found.get(row)! };
    }
  }

  async delete(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId));
  }
}
