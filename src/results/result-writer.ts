/** Writing per-record results: once per row, counted once, in script-sized chunks. */
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import { RESULT_STATUSES, type RecordResult } from '../model/import.js';
import { chunks } from './chunks.js';
import { encodeResult, type ResultLayout } from './import-codec.js';
import { groupEntries } from './row-buckets.js';
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
 * joined per bucket, and what they add to the counters.
 */
function recordArgs(
  results: readonly RecordResult[],
  common: ScriptArg[],
  layout: ResultLayout | undefined,
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
  args.push(
    results.map((result) => result.row).join(','),
    maxRow,
    buckets.size,
    tally.counters.size,
  );
  for (const [bucket, text] of buckets) args.push(bucket, text);
  for (const [field, n] of tally.counters) args.push(field, n);
  for (const [field, message] of tally.whys) args.push(field, message);
  return args;
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
 * these results filled (row-buckets.ts).
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
  for (const chunk of chunks(firstOfEachRow(results), RESULT_CHUNK)) {
    let part: readonly RecordResult[] = chunk;
    for (;;) {
      const args = recordArgs(part, commonArgs(), layout);
      const reply = await runImportScript(redis, 'recordResults', importKeyList(keys), args);
      if (reply === null) throw importNotFound(importId);
      const [count, ...rest] = reply as [number, ...unknown[]];
      if (Number(count) === -1) {
        // rows that had their result already (this batch ran before): the rest go again
        const taken = new Set((rest[0] as string[]).map(Number));
        part = part.filter((result) => !taken.has(result.row));
        continue;
      }
      const [meta, counts, filled] = rest as [unknown, unknown, number[]];
      written += Number(count);
      hashes = [meta, counts];
      full.push(...filled);
      break;
    }
  }
  return hashes ? { written, hashes, full } : { written, full };
}

/** The rows among these without a result, in the order given; no result JSON is transferred. */
export async function findMissingRows(
  redis: Redis,
  keys: ImportKeys,
  rows: readonly number[],
): Promise<number[]> {
  const missing: number[] = [];
  for (const part of chunks(rows, RESULT_CHUNK)) {
    const reply = await runImportScript(redis, 'missingRows', [keys.done], [part.join(',')]);
    for (const row of reply as Array<string | number>) missing.push(Number(row));
  }
  return missing;
}
