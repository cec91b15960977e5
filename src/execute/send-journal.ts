/**
 * Remembers, in Redis, which rows of an import were handed to the admin server, written
 * before each call. After a crash, a row in the journal without a result may have been
 * applied, so it is looked up before it is sent again.
 *
 * One bit per row (`<p>:import:<id>:sent-rows`, a Redis bitmap): rows are numbered densely from
 * 1, so a million rows take 125 KB where a set of their numbers took some 50 MB. A call's rows
 * are marked as stretches of consecutive rows (a BITFIELD field each), and read back as the
 * bitmap's bytes that hold them. An import journaled by an earlier version kept a set
 * (`…:sent`), which is still read.
 */
import type { Redis } from 'ioredis';
import type { ImportState, ImportStateRead } from '../model/import.js';
import { importKeys, sentRowsKeys } from '../results/import-keys.js';
import { defineScript, type ScriptCommand } from '../util/redis-commands.js';

/**
 * Lua: sets the bits of `runs` (ARGV from `first`: a run's first row, then its length of at most
 * RUN_BITS) in KEYS[key], each run as one field of one BITFIELD: a call's rows, mostly one
 * stretch, cost a few operations instead of one SETBIT per row.
 */
const SET_RUNS = `
local function set_runs(key, first)
  local ops = {}
  for i = first, #ARGV, 2 do
    local width = tonumber(ARGV[i + 1])
    ops[#ops + 1] = 'SET'
    ops[#ops + 1] = 'u' .. width
    ops[#ops + 1] = ARGV[i]
    ops[#ops + 1] = 2 ^ width - 1
    -- unpack takes a few thousand values at most
    if #ops >= 4000 then redis.call('BITFIELD', key, unpack(ops)); ops = {} end
  end
  if #ops > 0 then redis.call('BITFIELD', key, unpack(ops)) end
end
`;

/** KEYS[1] the bitmap; ARGV ttl, runs… */
const MARK = `${SET_RUNS}
set_runs(KEYS[1], 2)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1`;

/**
 * KEYS[1] the import's meta hash, KEYS[2] the bitmap; ARGV ttl, n, n states that let a call go,
 * runs… Reads the state and reason, and marks the rows only when the state is one of those.
 */
const MARK_WHILE = `${SET_RUNS}
local m = redis.call('HMGET', KEYS[1], 'state', 'reason', 'reasonCode')
local state, reason, code = m[1], m[2], m[3]
if not state then return {} end
local n = tonumber(ARGV[2])
for i = 3, 2 + n do
  if ARGV[i] == state then
    set_runs(KEYS[2], 3 + n)
    redis.call('EXPIRE', KEYS[2], ARGV[1])
    break
  end
end
return {state, reason or '', code or ''}`;

/** Rows one BITFIELD operation sets at most: a u32 of ones is exact in Lua's numbers. */
const RUN_BITS = 32;

/** The rows as runs of consecutive rows (first row, length), in ascending order. */
function runsOf(rows: readonly number[]): number[] {
  const sorted = rows.map(checkedRow).sort((left, right) => left - right);
  const runs: number[] = [];
  for (let index = 0; index < sorted.length;) {
    const first = sorted[index]!;
    let length = 1;
    index++;
    while (index < sorted.length && length < RUN_BITS && sorted[index]! <= first + length) {
      // a row given twice is in its run already
      if (sorted[index] === first + length) length++;
      index++;
    }
    runs.push(first, length);
  }
  return runs;
}

/** Rows further apart than this many bits are read with a GETRANGE each. */
const READ_GAP_BITS = 8 * 1024;

/** The rows (ascending) in stretches that one GETRANGE each reads, without long gaps. */
function readSpans(sorted: readonly number[]): { first: number; last: number }[] {
  const spans: { first: number; last: number }[] = [];
  for (const row of sorted) {
    const span = spans[spans.length - 1];
    if (span && row - span.last <= READ_GAP_BITS) span.last = row;
    else spans.push({ first: row, last: row });
  }
  return spans;
}

export class SendJournal {
  private readonly mark: ScriptCommand;
  private readonly markWhile: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {
    this.mark = defineScript(redis, { keys: 1, lua: MARK });
    this.markWhile = defineScript(redis, { keys: 2, lua: MARK_WHILE });
  }

  private key(importId: string): string {
    return sentRowsKeys(this.prefix, importId).bitmap;
  }

  /** The set an earlier version kept. */
  private legacyKey(importId: string): string {
    return sentRowsKeys(this.prefix, importId).set;
  }

  /** Records that these rows are about to be sent. */
  async markSent(importId: string, rows: readonly number[]): Promise<void> {
    if (rows.length === 0) return;
    await this.mark(this.key(importId), this.ttlSeconds, ...runsOf(rows));
  }

  /**
   * The import's state and reason, read in one step with marking the rows sent when the state is
   * one of `going`: a call stopped by the state never reaches the journal. Undefined: no import.
   */
  async markSentWhile(
    importId: string,
    going: readonly ImportState[],
    rows: readonly number[],
  ): Promise<ImportStateRead | undefined> {
    const [state, reason, reasonCode] = (await this.markWhile(
      importKeys(this.prefix, importId).meta,
      this.key(importId),
      this.ttlSeconds,
      going.length,
      ...going,
      ...runsOf(rows),
    )) as [ImportState?, string?, string?];
    if (state === undefined) return undefined;
    return { state, ...(reason ? { reason } : {}), ...(reasonCode ? { reasonCode } : {}) };
  }

  /**
   * Which of these rows were sent at least once before, in the order given: the bitmap's bytes
   * that hold them are read (a batch's rows, one stretch: one GETRANGE) and looked at here.
   */
  async sentAmong(importId: string, rows: readonly number[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const sorted = rows.map(checkedRow).sort((left, right) => left - right);
    const key = this.key(importId);
    const spans = readSpans(sorted);
    const [legacy, ...parts] = await Promise.all([
      this.redis.exists(this.legacyKey(importId)),
      ...spans.map((span) => this.redis.getrangeBuffer(key, span.first >>> 3, span.last >>> 3)),
    ]);
    const sent = new Set<number>();
    spans.forEach((span, index) => {
      const bytes = parts[index]!;
      const base = (span.first >>> 3) * 8;
      for (const row of sorted) {
        if (row < span.first || row > span.last) continue;
        const byte = bytes[(row - base) >>> 3] ?? 0;
        if (byte & (0x80 >> (row & 7))) sent.add(row);
      }
    });
    if (legacy === 1) {
      // an import journaled by an earlier version: its set, for the rows the bitmap lacks
      const unsent = sorted.filter((row) => !sent.has(row));
      if (unsent.length > 0) {
        const flags = await this.redis.smismember(this.legacyKey(importId), ...unsent);
        unsent.forEach((row, index) => {
          if (flags[index] === 1) sent.add(row);
        });
      }
    }
    return rows.filter((row) => sent.has(row));
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
