/**
 * `porter map test` and the console's preview of a mapping: the first rows of a file through the
 * mapping, each as its input and the fields it gives, or why it is skipped or fails. Nothing is
 * stored or sent; `$unique` reads the target's names when a directory is given.
 */
import type { ResourceName } from '../admin/resources.js';
import type { IngestSource } from '../ingest/byte-source.js';
import { ingest } from '../ingest/ingest.js';
import type { Mapping } from '../ingest/mapping.js';
import type { IngestOptions } from '../ingest/options.js';

export interface MapTestOptions {
  resource: ResourceName;
  mapping: Mapping;
  /** The file's text encoding (windows-1252, utf-16le …); default UTF-8 or a UTF-16 BOM's. */
  encoding?: string;
  /** Rows shown. @defaultValue 20 */
  rows?: number;
  listSeparator?: string;
  delimiter?: string;
  format?: IngestOptions['format'];
  fileName?: string;
  /** The target's records, for `$unique`; none: only the sample's own names count. */
  directory?: IngestOptions['directory'];
}

export interface MapTestRow {
  row: number;
  line?: number;
  input: Record<string, unknown>;
  status: 'ok' | 'skipped' | 'failed';
  /** The fields the record would carry (ok rows). */
  output?: Record<string, unknown>;
  errorCode?: string;
  field?: string;
  /** Why it is skipped or failed. */
  message?: string;
}

export interface MapTestResult {
  columns: string[];
  rows: MapTestRow[];
  /** Whether `$unique` saw the target's names. */
  directoryRead: boolean;
}

export const MAP_TEST_DEFAULT_ROWS = 20;

/** Runs the first rows of `source` through the mapping. File-level problems throw PorterError. */
export async function testMapping(
  source: IngestSource,
  options: MapTestOptions,
): Promise<MapTestResult> {
  const limit = options.rows ?? MAP_TEST_DEFAULT_ROWS;
  let directoryRead = false;
  const directory = options.directory;
  const run = ingest(source, {
    resource: options.resource,
    mode: 'upsert',
    format: options.format,
    fileName: options.fileName,
    delimiter: options.delimiter,
    listSeparator: options.listSeparator,
    encoding: options.encoding,
    mapping: options.mapping,
    directory:
      directory &&
      async function* () {
        yield* directory();
        directoryRead = true;
      },
  });
  const rows: MapTestRow[] = [];
  try {
    for await (const item of run.items) {
      const base = { row: item.row, line: item.line, input: item.input };
      if (item.kind === 'record') rows.push({ ...base, status: 'ok', output: item.record });
      else if (item.kind === 'skipped')
        rows.push({ ...base, status: 'skipped', message: item.reason });
      else {
        rows.push({
          ...base,
          status: 'failed',
          errorCode: item.errorCode,
          field: item.field,
          message: item.error,
        });
      }
      if (rows.length >= limit) break;
    }
  } finally {
    await run.items.return(undefined);
  }
  return { columns: (await run.header).columns, rows, directoryRead };
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The result for people: each row's input, then field by field what it gives. */
export function formatMapTest(result: MapTestResult): string {
  const lines: string[] = [];
  for (const row of result.rows) {
    const where = row.line === undefined ? `row ${row.row}` : `row ${row.row} (line ${row.line})`;
    lines.push(`${where}: ${row.status}`);
    lines.push(`  input:`);
    for (const [column, value] of Object.entries(row.input)) {
      lines.push(`    ${column} = ${show(value)}`);
    }
    if (row.status === 'ok') {
      lines.push(`  output:`);
      const width = Math.max(...Object.keys(row.output ?? {}).map((field) => field.length), 0);
      for (const [field, value] of Object.entries(row.output ?? {})) {
        lines.push(`    ${field.padEnd(width)} → ${show(value)}`);
      }
    } else {
      const code = row.errorCode === undefined ? '' : `${row.errorCode} `;
      lines.push(`  ${code}${row.message ?? ''}`);
    }
  }
  const counts = { ok: 0, skipped: 0, failed: 0 };
  for (const row of result.rows) counts[row.status]++;
  lines.push(
    `${result.rows.length} rows: ${counts.ok} ok, ${counts.skipped} skipped, ${counts.failed} failed` +
      (result.directoryRead ? "; $unique checked the target's names" : ''),
  );
  return `${lines.join('\n')}\n`;
}
