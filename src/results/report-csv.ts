/**
 * The per-record report as CSV, streamed through csv-stringify with backpressure.
 *
 * Default layout: the report columns (`row, line, sourceRow, key, action, status, id, errorCode, field,
 * error, attempts, changes`; changes as readable text, see change-text.ts), then the upload's columns in upload order. A report column whose name is also an
 * input column gets `_` in front (`id` → `_id`), so both survive.
 *
 * Input-first layout (`inputFirst`, for failed records): the upload's columns first, unchanged,
 * then the report columns named `porter_row`, `porter_status`, `porter_error`, ... A user fixes
 * the file and uploads it again; ingest ignores every `porter_*` column. Input columns named
 * `porter_*` are never written, in either layout, so a report of a re-upload has no duplicates.
 *
 * Every cell, header included, goes through formulaSafe.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { RecordResult } from '../model/import.js';
import { changesText } from './change-text.js';
import { formulaSafe } from './formula-safe.js';

export const REPORT_COLUMNS = [
  'row',
  'line',
  'sourceRow',
  'key',
  'action',
  'status',
  'id',
  'errorCode',
  'field',
  'error',
  'attempts',
  'changes',
] as const satisfies readonly (keyof RecordResult)[];

/** Prefix of the report columns in the input-first layout; ingest must ignore such columns. */
export const REPORT_COLUMN_PREFIX = 'porter_';

export interface CsvReportOptions {
  /** The upload's column order (ImportInfo.columns). Input keys not listed are not written. */
  columns: readonly string[];
  /** Input columns first and report columns as `porter_*`. Default false. */
  inputFirst?: boolean;
  /** Field delimiter. Default `,`. */
  delimiter?: string;
  /** Start with a UTF-8 byte order mark, which Excel needs to read UTF-8. Default false. */
  bom?: boolean;
  /** End `out` when the report is written. Default true. */
  end?: boolean;
}

export interface CsvReportLayout {
  header: string[];
  /** The cells of one result, in header order, not yet formula-safe. */
  cells(result: RecordResult): string[];
}

/** A cell's text: empty for null/undefined, JSON for objects and arrays. */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

/** Header and cell order for the given upload columns and layout. */
export function csvReportLayout(columns: readonly string[], inputFirst = false): CsvReportLayout {
  const inputColumns = columns.filter((name) => !name.startsWith(REPORT_COLUMN_PREFIX));
  const taken = new Set(inputColumns);
  const reportNames = REPORT_COLUMNS.map((name) => {
    if (inputFirst) return REPORT_COLUMN_PREFIX + name;
    let unique: string = name;
    while (taken.has(unique)) unique = `_${unique}`;
    taken.add(unique);
    return unique;
  });
  const reportCells = (result: RecordResult): string[] =>
    REPORT_COLUMNS.map((name) => {
      if (name === 'changes') return changesText(result.changes);
      // a sync's record found only on the server has no row in the upload
      if (name === 'row' && result.serverOnly) return '';
      return cellText(result[name]);
    });
  const inputCells = (result: RecordResult): string[] =>
    inputColumns.map((name) => cellText(result.input?.[name]));
  return inputFirst
    ? {
        header: [...inputColumns, ...reportNames],
        cells: (result) => [...inputCells(result), ...reportCells(result)],
      }
    : {
        header: [...reportNames, ...inputColumns],
        cells: (result) => [...reportCells(result), ...inputCells(result)],
      };
}

/** Writes the results as CSV to `out`, one line per result; resolves with the lines written. */
export async function writeCsvReport(
  results: AsyncIterable<RecordResult> | Iterable<RecordResult>,
  out: NodeJS.WritableStream,
  options: CsvReportOptions,
): Promise<number> {
  const layout = csvReportLayout(options.columns, options.inputFirst);
  let written = 0;
  async function* records(): AsyncGenerator<string[]> {
    yield layout.header.map(formulaSafe);
    for await (const result of results) {
      written++;
      yield layout.cells(result).map(formulaSafe);
    }
  }
  await pipeline(
    Readable.from(records()),
    stringify({ delimiter: options.delimiter ?? ',', bom: options.bom ?? false }),
    out,
    { end: options.end ?? true },
  );
  return written;
}
