/**
 * Per-resource CSV: one column per field (spec order), lists joined by the list separator,
 * objects as JSON text, every cell (header included) formula-safe like the reports. The last
 * column, `porter_export`, is empty: it tells an import that porter wrote the file, so the
 * formula quotes are taken off again (ingest ignores porter_* columns).
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { ResourceName } from '../admin/resources.js';
import { formulaSafe } from '../results/formula-safe.js';
import { cellText } from '../results/report-csv.js';
import { PORTABLE_FIELDS } from './portable-record.js';

/** Marks a CSV as written by porter. */
export const EXPORT_MARKER_COLUMN = 'porter_export';
/** Separator of list items inside one cell; the import's default. */
export const CSV_LIST_SEPARATOR = '|';

/** The header of a resource's CSV. */
export function csvColumns(resource: ResourceName): string[] {
  return [...PORTABLE_FIELDS[resource], EXPORT_MARKER_COLUMN];
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** One field's cell text, before formulaSafe. */
export function csvCellText(value: unknown, listSeparator = CSV_LIST_SEPARATOR): string {
  if (Array.isArray(value) && value.every(isScalar)) return value.join(listSeparator);
  return cellText(value);
}

/** The formula-safe cells of one portable record, in csvColumns order. */
export function csvCells(
  resource: ResourceName,
  record: Readonly<Record<string, unknown>>,
  onListItemWithSeparator?: (field: string) => void,
): string[] {
  const cells: string[] = [];
  for (const field of PORTABLE_FIELDS[resource]) {
    const value = record[field];
    if (
      onListItemWithSeparator &&
      Array.isArray(value) &&
      value.some((item) => typeof item === 'string' && item.includes(CSV_LIST_SEPARATOR))
    ) {
      onListItemWithSeparator(field);
    }
    cells.push(formulaSafe(csvCellText(value)));
  }
  cells.push('');
  return cells;
}

/** Rows stringified per batch: csv-stringify's sync form, without a stream step per row. */
const ROWS_PER_BATCH = 500;

/** The CSV of the records, streamed in batches of rows. */
export function csvSource(
  resource: ResourceName,
  records: AsyncIterable<Readonly<Record<string, unknown>>>,
  warn: (message: string) => void,
): Readable {
  const onSeparator = (field: string): void =>
    warn(
      `${resource}: a value in "${field}" holds "${CSV_LIST_SEPARATOR}", the list separator; ` +
        'an import of the CSV splits it there (the JSON formats keep it whole)',
    );
  async function* text(): AsyncGenerator<string> {
    let rows: string[][] = [csvColumns(resource).map(formulaSafe)];
    for await (const record of records) {
      rows.push(csvCells(resource, record, onSeparator));
      if (rows.length >= ROWS_PER_BATCH) {
        yield stringify(rows, { delimiter: ',' });
        rows = [];
      }
    }
    if (rows.length > 0) yield stringify(rows, { delimiter: ',' });
  }
  return Readable.from(text(), { objectMode: false });
}
