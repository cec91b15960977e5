/**
 * Remembers, in Redis, which rows of an import were handed to the admin server, written
 * before each call. After a crash, a row in the journal without a result may have been
 * applied, so it is looked up before it is sent again.
 *
 * One bit per row (`<p>:import:<id>:sent-rows`, a Redis bitmap): rows are numbered densely from
 * 1, so a million rows take 125 KB where a set of their numbers took some 50 MB. An import
 * journaled by an earlier version kept a set (`…:sent`), which is still read.
 */
import type { Redis } from 'ioredis';
import type { ImportState } from '../model/import.js';
import { importKeys } from '../results/import-keys.js';
import { defineScript, type ScriptCommand } from '../util/redis-commands.js';
import { importKeyBase } from '../redis/key-tags.js';

/** KEYS[1] the bitmap; ARGV ttl, rows… */
const MARK = `
for i = 2, #ARGV do redis.call('SETBIT', KEYS[1], ARGV[i], 1) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1`;

/**
 * KEYS[1] the import's meta hash, KEYS[2] the bitmap; ARGV ttl, n, n states that let a call go,
 * rows… Reads the state and reason, and marks the rows only when the state is one of those.
 */
const MARK_WHILE = `
local state = redis.call('HGET', KEYS[1], 'state')
local reason = redis.call('HGET', KEYS[1], 'reason')
if not state then return {} end
local n = tonumber(ARGV[2])
for i = 3, 2 + n do
  if ARGV[i] == state then
    for j = 3 + n, #ARGV do redis.call('SETBIT', KEYS[2], ARGV[j], 1) end
    redis.call('EXPIRE', KEYS[2], ARGV[1])
    break
  end
end
return {state, reason}`;

/** KEYS[1] the bitmap, KEYS[2] an earlier version's set; ARGV rows… Returns a flag per row. */
const AMONG = `
local legacy = redis.call('EXISTS', KEYS[2]) == 1
local flags = {}
for i = 1, #ARGV do
  local sent = redis.call('GETBIT', KEYS[1], ARGV[i])
  if sent == 0 and legacy then sent = redis.call('SISMEMBER', KEYS[2], ARGV[i]) end
  flags[i] = sent
end
return flags`;

export class SendJournal {
  private readonly mark: ScriptCommand;
  private readonly among: ScriptCommand;
  private readonly markWhile: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {
    this.mark = defineScript(redis, { keys: 1, lua: MARK });
    this.among = defineScript(redis, { keys: 2, lua: AMONG });
    this.markWhile = defineScript(redis, { keys: 2, lua: MARK_WHILE });
  }

  private key(importId: string): string {
    return `${importKeyBase(this.prefix, importId)}:sent-rows`;
  }

  /** The set an earlier version kept. */
  private legacyKey(importId: string): string {
    return `${importKeyBase(this.prefix, importId)}:sent`;
  }

  /** Records that these rows are about to be sent. */
  async markSent(importId: string, rows: readonly number[]): Promise<void> {
    if (rows.length === 0) return;
    await this.mark(this.key(importId), this.ttlSeconds, ...rows.map(checkedRow));
  }

  /**
   * The import's state and reason, read in one step with marking the rows sent when the state is
   * one of `going`: a call stopped by the state never reaches the journal. Undefined: no import.
   */
  async markSentWhile(
    importId: string,
    going: readonly ImportState[],
    rows: readonly number[],
  ): Promise<{ state: ImportState; reason?: string } | undefined> {
    const [state, reason] = (await this.markWhile(
      importKeys(this.prefix, importId).meta,
      this.key(importId),
      this.ttlSeconds,
      going.length,
      ...going,
      ...rows.map(checkedRow),
    )) as [ImportState?, string?];
    if (state === undefined) return undefined;
    return reason ? { state, reason } : { state };
  }

  /** Which of these rows were sent at least once before. */
  async sentAmong(importId: string, rows: readonly number[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const flags = (await this.among(
      this.key(importId),
      this.legacyKey(importId),
      ...rows.map(checkedRow),
    )) as number[];
    return rows.filter((_, index) => flags[index] === 1);
  }

  async delete(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId), this.legacyKey(importId));
  }
}

/** A row is a bit's offset: a positive integer (Redis refuses offsets from 2^32). */
function checkedRow(row: number): number {
  if (!Number.isSafeInteger(row) || row < 1 || row >= 2 ** 32) {
    throw new RangeError(`row ${row} cannot be journaled`);
  }
  return row;
}
