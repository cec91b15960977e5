/**
 * Where an import keeps, per record it changed, what undoing it needs (src/plan/undo-entry.ts):
 * one hash `<p>:import:<id>:undo`, row → compact entry, with the import's TTL. Only changed
 * records have an entry, so it holds about as much as the import changed.
 */
import type { Redis } from 'ioredis';
import { setHashExpiring } from '../util/redis-commands.js';
import { importKeyBase } from '../redis/key-tags.js';

/** Rows read per round trip. */
const READ_CHUNK = 1000;

export class UndoLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  key(importId: string): string {
    return `${importKeyBase(this.prefix, importId)}:undo`;
  }

  /** Keeps these entries (row → encoded entry); keeping a row again replaces it. */
  async keep(importId: string, entries: ReadonlyMap<number, string>): Promise<void> {
    const fields: (string | number)[] = [];
    for (const [row, text] of entries) fields.push(row, text);
    await setHashExpiring(this.redis, this.key(importId), fields, this.ttlSeconds);
  }

  /** How many records the import changed (entries kept). */
  async count(importId: string): Promise<number> {
    return this.redis.hlen(this.key(importId));
  }

  /**
   * The entries in row order: the row numbers are gathered first (a number each, whatever rows
   * the import used), then the entries read a chunk at a time.
   */
  async *entries(importId: string): AsyncGenerator<{ row: number; text: string }> {
    const key = this.key(importId);
    const rows: number[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, 'COUNT', READ_CHUNK);
      for (let index = 0; index < flat.length; index += 2) rows.push(Number(flat[index]));
      cursor = next;
    } while (cursor !== '0');
    // a field HSCAN returned twice (the hash grew meanwhile) is read once
    const ordered = [...new Set(rows)].sort((left, right) => left - right);
    for (let start = 0; start < ordered.length; start += READ_CHUNK) {
      const chunk = ordered.slice(start, start + READ_CHUNK);
      const values = await this.redis.hmget(key, ...chunk.map(String));
      for (let index = 0; index < chunk.length; index++) {
        const text = values[index];
        if (text) yield { row: chunk[index]!, text };
      }
    }
  }

  async delete(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId));
  }
}
