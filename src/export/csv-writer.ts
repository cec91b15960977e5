/**
 * Per-resource CSV: one column per field (spec order), lists joined by the list separator,
 * objects as JSON text, every cell (header included) formula-safe like the reports. The last
 * column, `porter_export`, is empty: it tells an import that porter wrote the file, so the
 * formula quotes are taken off again (ingest ignores porter_* columns).
 *
 * Lines are written here rather than by csv-stringify, byte for byte as csv-stringify's
 * defaults write them (`,` between cells, a cell holding `"`, `,`, CR or LF quoted with its
 * quotes doubled, LF after every line): a million records pay for string joins, not for a
 * general-purpose stringifier's options.
 */
import type { ResourceName } from '../admin/resources.js';
import { formulaSafe } from '../results/formula-safe.js';
import { cellText } from '../results/report-csv.js';
import type { RecordBatches } from './export-types.js';
import { PORTABLE_FIELDS } from './portable-record.js';
import { batchText } from './text-chunks.js';

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

/** A cell needs quotes when it holds a quote, the delimiter or a line break. */
const NEEDS_QUOTES = /[",\n\r]/;

/** Whether formulaSafe may change a cell starting with this character: `'` or a trigger. */
function mayTrigger(code: number): boolean {
  // ' = + - @ TAB CR
  return (
    code === 0x27 ||
    code === 0x3d ||
    code === 0x2b ||
    code === 0x2d ||
    code === 0x40 ||
    code === 0x09 ||
    code === 0x0d
  );
}

/** The cell as the file carries it: formula-safe, then quoted when it has to be. */
export function csvCell(text: string): string {
  if (text.length === 0) return text;
  const safe = mayTrigger(text.charCodeAt(0)) ? formulaSafe(text) : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** A list holding an item with the list separator, which an import would split there. */
function holdsSeparator(value: readonly unknown[]): boolean {
  return value.some((item) => typeof item === 'string' && item.includes(CSV_LIST_SEPARATOR));
}

/**
 * One line of a portable record, LF included, in csvColumns order (the marker cell empty).
 * `onListItemWithSeparator` hears of each field whose list holds the separator.
 */
export function csvLine(
  fields: readonly string[],
  record: Readonly<Record<string, unknown>>,
  onListItemWithSeparator: (field: string) => void,
): string {
  let line = '';
  for (const field of fields) {
    const value = record[field];
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number') text = String(value);
    else if (value === undefined || value === null) text = '';
    else {
      if (Array.isArray(value) && holdsSeparator(value)) onListItemWithSeparator(field);
      text = csvCellText(value);
    }
    line += `${csvCell(text)},`;
  }
  return `${line}\n`;
}

/** The CSV of the records, in parts of about 64 KiB as their batches are read. */
export function csvSource(
  resource: ResourceName,
  batches: RecordBatches,
  warn: (message: string) => void,
): AsyncGenerator<string> {
  const fields = PORTABLE_FIELDS[resource];
  const onSeparator = (field: string): void =>
    warn(
      `${resource}: a value in "${field}" holds "${CSV_LIST_SEPARATOR}", the list separator; ` +
        'an import of the CSV splits it there (the JSON formats keep it whole)',
    );
  async function* text(): AsyncGenerator<string> {
    yield `${csvColumns(resource).map(csvCell).join(',')}\n`;
    for await (const batch of batches) {
      let lines = '';
      for (const record of batch) lines += csvLine(fields, record, onSeparator);
      yield lines;
    }
  }
  return batchText(text());
}
