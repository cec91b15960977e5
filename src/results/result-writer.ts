/** Writing per-record results: once per row, counted once, in script-sized chunks. */
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import { RESULT_STATUSES, type RecordResult } from '../model/import.js';
import { chunks } from './chunks.js';
import { encodeResult, type ResultLayout } from './import-codec.js';
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

/**
 * The status, and the action of a record that was (or would be) written, or the error code and
 * message of one that failed or was not processed, for the counters.
 */
export function resultTag(result: RecordResult): string {
  const counted = result.status === 'succeeded' || result.status === 'planned';
  if (counted) return result.action ? `${result.status}/${result.action}` : result.status;
  const bad = result.status === 'failed' || result.status === 'unprocessed';
  if (!bad || result.errorCode === undefined) return result.status;
  const code = String(result.errorCode).replace(/[!/]/g, '_');
  return `${result.status}!${code}!${(result.error ?? '').slice(0, WHY_LENGTH)}`;
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
  for (const part of chunks(results, RESULT_CHUNK)) {
    const args = commonArgs();
    for (const result of part) {
      args.push(result.row, resultTag(result), encodeResult(result, layout));
    }
    const reply = await runImportScript(redis, 'recordResults', importKeyList(keys), args);
    if (reply === null) throw importNotFound(importId);
    const [count, meta, counts, filled] = reply as [number, unknown, unknown, number[]];
    written += Number(count);
    hashes = [meta, counts];
    full.push(...filled);
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
    const reply = await runImportScript(redis, 'missingRows', [keys.done], part);
    for (const row of reply as Array<string | number>) missing.push(Number(row));
  }
  return missing;
}
