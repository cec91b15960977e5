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
export function holdsSeparator(value: readonly unknown[]): boolean {
  return value.some((item) => typeof item === 'string' && item.includes(CSV_LIST_SEPARATOR));
}

/** One field's cell. */
export function cellOf(value: unknown): string {
  if (typeof value === 'string') return csvCell(value);
  if (typeof value === 'number') {
    // digits, sign, point, exponent: never quoted, formula-safe when negative
    const text = String(value);
    return mayTrigger(text.charCodeAt(0)) ? formulaSafe(text) : text;
  }
  if (value === undefined || value === null) return '';
  return csvCell(csvCellText(value));
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
  // the cells, then the empty marker cell and the line end, joined by commas
  const cells: string[] = new Array(fields.length + 1);
  cells[fields.length] = '\n';
  let listsWithSeparator: string[] | undefined;
  // a portable record holds its fields in column order: walking its keys reads each value
  // at once, where looking up every column by name costs a dictionary look-up each
  let column = 0;
  for (const key in record) {
    while (column < fields.length && fields[column] !== key) cells[column++] = '';
    if (column === fields.length) return csvLineByName(fields, record, onListItemWithSeparator);
    const value = record[key];
    if (Array.isArray(value) && holdsSeparator(value)) (listsWithSeparator ??= []).push(key);
    cells[column++] = cellOf(value);
  }

  listsWithSeparator?.forEach(onListItemWithSeparator);
  return cells.join(',');
}

/** csvLine for a record whose keys are not all columns in column order. */
function csvLineByName(
  fields: readonly string[],
  record: Readonly<Record<string, unknown>>,
  onListItemWithSeparator: (field: string) => void,
): string {
  const cells = fields.map((field) => {
    const value = record[field];
    if (Array.isArray(value) && holdsSeparator(value)) onListItemWithSeparator(field);
    return cellOf(value);
  });
  cells.push('\n');
  return cells.join(',');
}

/** The warning of a list whose item holds the separator, per field. */
function separatorWarning(resource: ResourceName, warn: (message: string) => void) {
  return (field: string): void =>
    warn(
      `${resource}: a value in "${field}" holds "${CSV_LIST_SEPARATOR}", the list separator; ` +
        'an import of the CSV splits it there (the JSON formats keep it whole)',
    );
}

/** The CSV's header line. */
function headerLine(resource: ResourceName): string {
  return `${csvColumns(resource).map(csvCell).join(',')}\n`;
}

/** The CSV of the records, in parts of about 64 KiB as their batches are read. */
export function csvSource(
  resource: ResourceName,
  batches: RecordBatches,
  warn: (message: string) => void,
): AsyncGenerator<string> {
  const fields = PORTABLE_FIELDS[resource];
  const onSeparator = separatorWarning(resource, warn);
  async function* text(): AsyncGenerator<string> {
    yield headerLine(resource);
    for await (const batch of batches) {
      let lines = '';
      for (const record of batch) lines += csvLine(fields, record, onSeparator);
      yield lines;
    }
  }
  return batchText(text());
}

/**
 * The CSV of an answer read by the transcoder (csv-transcoder.ts): its lines as they came, and
 * the records it left to the general way (portable by now) written here, in their place.
 */
export async function* csvTranscodedSource(
  resource: ResourceName,
  chunks: AsyncIterable<readonly (Buffer | Readonly<Record<string, unknown>>)[]>,
  warn: (message: string) => void,
): AsyncGenerator<string | Buffer> {
  const fields = PORTABLE_FIELDS[resource];
  const onSeparator = separatorWarning(resource, warn);
  yield headerLine(resource);
  for await (const parts of chunks) {
    if (parts.length === 1 && Buffer.isBuffer(parts[0])) {
      yield parts[0];
      continue;
    }
    const pieces = parts.map((part) =>
      Buffer.isBuffer(part) ? part : Buffer.from(csvLine(fields, part, onSeparator), 'utf8'),
    );
    if (pieces.length > 0) yield Buffer.concat(pieces);
  }
}
