/** Writing per-record results: once per row, counted once, in script-sized chunks. */
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import { RESULT_STATUSES, type RecordResult } from '../model/import.js';
import { chunks } from './chunks.js';
import { encodeResult, type ResultLayout } from './import-codec.js';
import { bucketPiece, groupEntries } from './row-buckets.js';
import { importNotFound } from './import-errors.js';
import { importKeyList, type ImportKeys } from './import-keys.js';
import { runImportScript, type ScriptArg } from './import-scripts.js';

/** Results per script call: large enough for throughput, small enough not to block Redis. */
export const RESULT_CHUNK = 1000;

/** A result with a bad row or status would corrupt the counters; refuse it before Redis. */
export function assertValidResult(result: RecordResult): void {
  if (!Number.isSafeInteger(result.row) || result.row < 1) {
    throw new PorterError('PORTER_INTERNAL', 'result row must be a positive integer', {
      details: { row: result.row },
    });
  }
  if (!RESULT_STATUSES.includes(result.status)) {
    throw new PorterError('PORTER_INTERNAL', `unknown result status ${String(result.status)}`, {
      details: { row: result.row, value: result.status },
    });
  }
}

/** Characters of a record's message kept as the first message of its code. */
const WHY_LENGTH = 300;

/** What one write adds to the counters, and the first message of each error code. */
interface Tally {
  counters: Map<string, number>;
  whys: Map<string, string>;
}

function count(counters: Map<string, number>, field: string): void {
  counters.set(field, (counters.get(field) ?? 0) + 1);
}

/**
 * Counts a result: its status, and the action of a record that was (or would be) written, or
 * the error code of one that failed or was not processed, whose first message is kept so a
 * summary can say why.
 */
export function tallyResult(result: RecordResult, tally: Tally): void {
  const { status } = result;
  count(tally.counters, status);
  if (status === 'succeeded' || status === 'planned') {
    if (result.action) count(tally.counters, `action:${result.action}`);
    return;
  }
  const bad = status === 'failed' || status === 'unprocessed';
  if (!bad || result.errorCode === undefined) return;
  const code = String(result.errorCode).replace(/[!/]/g, '_');
  count(tally.counters, `code:${status}:${code}`);
  const why = `why:${status}:${code}`;
  if (!tally.whys.has(why)) tally.whys.set(why, (result.error ?? '').slice(0, WHY_LENGTH));
}

/**
 * The record script's arguments for these results (each row once): the rows, their entries
 * joined per bucket (a piece each, row-buckets.ts), and what they add to the counters. Adds to
 * `texts` the buckets whose piece is text.
 */
function recordArgs(
  results: readonly RecordResult[],
  common: ScriptArg[],
  layout: ResultLayout | undefined,
  texts: Set<number>,
): ScriptArg[] {
  const tally: Tally = { counters: new Map(), whys: new Map() };
  let maxRow = 0;
  const entries: [number, string][] = [];
  for (const result of results) {
    tallyResult(result, tally);
    if (result.row > maxRow) maxRow = result.row;
    entries.push([result.row, encodeResult(result, layout)]);
  }
  const buckets = groupEntries(entries);
  const args = common;
  const { from, bytes } = rowBits(results.map((result) => result.row));
  args.push(from, bytes, results.length, maxRow, buckets.size, tally.counters.size);
  for (const [bucket, text] of buckets) {
    const piece = bucketPiece(text);
    if (typeof piece === 'string') texts.add(bucket);
    args.push(bucket, piece);
  }
  for (const [field, n] of tally.counters) args.push(field, n);
  for (const [field, message] of tally.whys) args.push(field, message);
  return args;
}

/**
 * The bytes of the `done` bitmap these rows' bits fall in (bit row − 1; Redis counts a byte's
 * bits from its highest), from byte `from`, with only those bits set.
 */
export function rowBits(rows: readonly number[]): { from: number; bytes: Buffer } {
  if (rows.length === 0) return { from: 0, bytes: Buffer.alloc(0) };
  let low = rows[0]!;
  let high = low;
  for (const row of rows) {
    if (row < low) low = row;
    if (row > high) high = row;
  }
  const from = (low - 1) >> 3;
  const bytes = Buffer.alloc(((high - 1) >> 3) - from + 1);
  for (const row of rows) bytes[((row - 1) >> 3) - from]! |= 0x80 >> ((row - 1) & 7);
  return { from, bytes };
}

/** Rows further apart than this are claimed in parts, so a claim's bytes stay few. */
const SPAN_ROWS = 8192;

/**
 * Items in parts whose rows lie close together (sorted by row when they do not), so that the
 * bytes of the bitmap a part's rows fall in stay few whatever rows a write names.
 */
export function closeParts<T>(items: readonly T[], rowOf: (item: T) => number): (readonly T[])[] {
  if (items.length === 0) return [];
  let low = rowOf(items[0]!);
  let high = low;
  for (const item of items) {
    const row = rowOf(item);
    if (row < low) low = row;
    if (row > high) high = row;
  }
  if (high - low <= Math.max(SPAN_ROWS, 8 * items.length)) return [items];
  const sorted = [...items].sort((a, b) => rowOf(a) - rowOf(b));
  const parts: T[][] = [];
  let part: T[] = [];
  for (const item of sorted) {
    if (part.length > 0 && rowOf(item) - rowOf(part[0]!) > SPAN_ROWS) {
      parts.push(part);
      part = [];
    }
    part.push(item);
  }
  parts.push(part);
  return parts;
}

/** Whether a row's bit is set in these bytes of the bitmap, read from byte `from`. */
function hasBit(bytes: Buffer, from: number, row: number): boolean {
  const byte = bytes[((row - 1) >> 3) - from];
  return byte !== undefined && (byte & (0x80 >> ((row - 1) & 7))) !== 0;
}

/** The first result of each row: a row given twice is written once, as the script would. */
function firstOfEachRow(results: readonly RecordResult[]): readonly RecordResult[] {
  const seen = new Set<number>();
  let unique: RecordResult[] | undefined;
  results.forEach((result, index) => {
    if (!seen.has(result.row)) {
      seen.add(result.row);
      unique?.push(result);
    } else unique ??= results.slice(0, index);
  });
  return unique ?? results;
}

/**
 * Runs the record script chunk by chunk. Returns how many results were new, the meta/counts
 * hashes the last chunk saw (undefined when there was nothing to write) and the buckets of rows
 * these results filled with a piece of text, which may gain by compacting (row-buckets.ts): a
 * bucket filled by a deflated piece is left as it is.
 */
export async function writeResults(
  redis: Redis,
  importId: string,
  keys: ImportKeys,
  results: readonly RecordResult[],
  commonArgs: () => ScriptArg[],
  /** The import's layout: what a stored result need not repeat. */
  layout?: ResultLayout,
): Promise<{ written: number; hashes?: [unknown, unknown]; full: number[] }> {
  results.forEach(assertValidResult);
  let written = 0;
  let hashes: [unknown, unknown] | undefined;
  const full: number[] = [];
  const close = chunks(firstOfEachRow(results), RESULT_CHUNK).flatMap((chunk) =>
    closeParts(chunk, (result) => result.row),
  );
  for (const chunk of close) {
    let part: readonly RecordResult[] = chunk;
    for (;;) {
      const texts = new Set<number>();
      const args = recordArgs(part, commonArgs(), layout, texts);
      const reply = await runImportScript(redis, 'recordResults', importKeyList(keys), args);
      if (reply === null) throw importNotFound(importId);
      const [count, ...rest] = reply as [number, ...unknown[]];
      if (Number(count) === -1) {
        // rows that had their result already (this batch ran before): the rest go again
        const taken = new Set((rest[0] as number[]).map((bit) => Number(bit) + 1));
        part = part.filter((result) => !taken.has(result.row));
        continue;
      }
      const [meta, counts, filled] = rest as [unknown, unknown, number[]];
      written += Number(count);
      hashes = [meta, counts];
      for (const bucket of filled) if (texts.has(Number(bucket))) full.push(Number(bucket));
      break;
    }
  }
  return hashes ? { written, hashes, full } : { written, full };
}

/**
 * The rows among these without a result, in the order given: one read of the bytes of the
 * `done` bitmap their bits fall in; no result JSON is transferred.
 */
export async function findMissingRows(
  redis: Redis,
  keys: ImportKeys,
  rows: readonly number[],
): Promise<number[]> {
  const done = new Set<number>();
  for (const chunk of chunks(rows, RESULT_CHUNK)) {
    for (const part of closeParts(chunk, (row) => row)) {
      const { from, bytes } = rowBits(part);
      const read = await redis.getrangeBuffer(keys.done, from, from + bytes.length - 1);
      for (const row of part) if (hasBit(read, from, row)) done.add(row);
    }
  }
  return rows.filter((row) => !done.has(row));
}
