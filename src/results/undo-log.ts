/**
 * Where an import keeps, per record it changed, what undoing it needs (src/plan/undo-entry.ts):
 * one hash `<p>:import:<id>:undo`, row → compact entry, with the import's TTL. Only changed
 * records have an entry, so it holds about as much as the import changed.
 */
import type { Redis } from 'ioredis';

/** Rows read per round trip. */
const READ_CHUNK = 1000;

export class UndoLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  key(importId: string): string {
    return `${this.prefix}:import:${importId}:undo`;
  }

  /** Keeps these entries (row → encoded entry); keeping a row again replaces it. */
  async keep(importId: string, entries: ReadonlyMap<number, string>): Promise<void> {
    if (entries.size === 0) return;
    const key = this.key(importId);
    const fields: string[] = [];
    for (const [row, text] of entries) fields.push(String(row), text);
    await this.redis
      .multi()
      .hset(key, ...fields)
      .expire(key, this.ttlSeconds)
      .exec();
  }

  /** How many records the import changed (entries kept). */
  async count(importId: string): Promise<number> {
    return this.redis.hlen(this.key(importId));
  }

  /** The entries in row order, rows 1 to `maxRow`, read a chunk at a time. */
  async *entries(importId: string, maxRow: number): AsyncGenerator<{ row: number; text: string }> {
    const key = this.key(importId);
    for (let start = 1; start <= maxRow; start += READ_CHUNK) {
      const rows: string[] = [];
      for (let row = start; row < start + READ_CHUNK && row <= maxRow; row++)
        rows.push(String(row));
      const values = await this.redis.hmget(key, ...rows);
      for (let index = 0; index < rows.length; index++) {
        const text = values[index];
        if (text) yield { row: Number(rows[index]), text };
      }
    }
  }

  async delete(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId));
  }
}
