/**
 * The ingest pipeline: parse (CSV / JSON / NDJSON) → map columns → coerce → validate, one
 * record at a time. Items are produced only as the consumer pulls them, and the upload is read
 * only as far as needed for that, so memory stays flat whatever the upload's size. The work is
 * done in slices (pacer.ts): the event loop gets a turn at least every few milliseconds.
 */
import { decodedSource, ENCODING_ADVICE } from './text-encoding.js';
import { PorterError } from '../errors/porter-error.js';
import { ByteReader, type IngestSource } from './byte-source.js';
import { REPORT_COLUMN_PREFIX } from '../results/report-csv.js';
import { restoreFormulaCell } from '../results/formula-safe.js';
import { ColumnResolver, resolveHeader } from './columns.js';
import { openCsvSource } from './csv-source.js';
import { detectFormat, firstContentIndex, type InputFormat } from './detect-format.js';
import { openJsonSource } from './json-source.js';
import { openNdjsonSource } from './ndjson-source.js';
import { resolveIngestOptions, type IngestOptions, type IngestSettings } from './options.js';
import { RecordBuilder } from './record-builder.js';
import type { IngestHeader, IngestItem, RawRecord } from './types.js';
import { Pacer } from './pacer.js';
import { RESOURCES } from '../admin/resources.js';
import { MappingEvaluator, type MappingOutcome } from '../mapping/evaluator.js';
import { anchorSettings, hasExpressions } from './mapping.js';
import { AnchorRows } from '../anchor/anchor-rows.js';
import { looksLikeUtf16 } from './utf8.js';

/** How far the start is searched for the first character that is not blank. */
const FORMAT_PEEK_BYTES = 64 * 1024;

export interface IngestRun {
  /**
   * Resolves once the header is read (CSV), or the first record (JSON, NDJSON: `columns` are
   * its keys). Rejects with the file-level error when the upload is refused before that.
   */
  header: Promise<IngestHeader>;
  /** The items in input order; file-level problems are thrown from here as PorterError. */
  items: AsyncGenerator<IngestItem>;
  /**
   * The same items in batches of what a slice of the upload held (a few hundred at most), for a
   * consumer that takes a batch at once. Iterate `items` or `batches`, not both.
   */
  batches: AsyncGenerator<IngestItem[]>;
  /** Anchors carried by more than one row, and their rows, once the upload is read. */
  anchorsTwice(): ReadonlyMap<string, readonly number[]>;
}

interface Opened {
  header: IngestHeader;
  /** JSON/NDJSON: the batch read to learn the columns, yielded first. */
  first?: RawRecord[];
  records: AsyncGenerator<RawRecord[]>;
}

const EMPTY_MESSAGES: Readonly<Record<InputFormat, string>> = {
  csv: 'The CSV upload has a header row but no records.',
  json: 'The JSON upload is an empty array: it holds no records.',
  ndjson: 'The NDJSON upload holds no records.',
};

/** Why an upload without records is refused; a sync says what it would have meant. */
function emptyMessage(format: InputFormat, mode: IngestSettings['mode']): string {
  return mode === 'sync'
    ? `${EMPTY_MESSAGES[format]} A sync of no records would lock or delete every record in its scope: nothing is done.`
    : EMPTY_MESSAGES[format];
}

/**
 * Starts ingesting an upload. Options and the mapping are checked at once (PorterError
 * PORTER_USAGE / PORTER_MAPPING_INVALID thrown from this call); reading starts right away but
 * only up to the header, so `header` can be awaited before iterating `items`. Iterate `items`
 * to the end, or leave the loop early (which closes the source).
 */
export function ingest(source: IngestSource, options: IngestOptions): IngestRun {
  const settings = resolveIngestOptions(options);
  const resolver = new ColumnResolver(settings.resource, settings.mapping);
  const builder = new RecordBuilder(settings, resolver);
  const evaluator = hasExpressions(settings.mapping)
    ? new MappingEvaluator(settings.mapping!, RESOURCES[settings.resource].keyField)
    : undefined;
  const pacer = new Pacer();
  const reader = new ByteReader(decodedSource(source, settings.encoding), pacer);
  const opened = open(reader, settings, resolver);
  // Both are also awaited by `items`; these handlers only keep an unobserved refusal quiet.
  opened.catch(() => {});
  const header = opened.then((state) => state.header);
  header.catch(() => {});
  const anchor = anchorSettings(settings.mapping);
  const anchors = anchor && new AnchorRows(settings.resource, anchor);
  const mapped = evaluator === undefined ? undefined : { evaluator, settings, anchors };
  const batches = produce(
    opened,
    reader,
    builder,
    pacer,
    mapped,
    settings.mode,
    settings.emptySync,
  );
  return {
    header,
    items: oneByOne(batches),
    batches,
    anchorsTwice: () => anchors?.twice ?? new Map(),
  };
}

async function* oneByOne(batches: AsyncGenerator<IngestItem[]>): AsyncGenerator<IngestItem> {
  for await (const batch of batches) yield* batch;
}

interface Mapped {
  evaluator: MappingEvaluator;
  settings: IngestSettings;
  /** The mapping's anchor: rows matched to the DAM as they are read. */
  anchors?: AnchorRows;
}

/**
 * Reads the records the target holds, once before the first record: their names for `$unique`,
 * and their anchors when the mapping has one.
 */
async function readDirectory(mapped: Mapped): Promise<void> {
  const { evaluator, settings, anchors } = mapped;
  if ((!evaluator.usesUnique && anchors === undefined) || settings.directory === undefined) return;
  const keyField = RESOURCES[settings.resource].keyField;
  for await (const record of settings.directory()) {
    const key = record[keyField];
    anchors?.index.add(record);
    const anchor = anchors?.index.anchorOf(record);
    if (typeof key === 'string') evaluator.names.addExisting(key, record, anchor);
  }
  evaluator.names.directoryRead = true;
}

/**
 * The item of one raw record, through the mapping's expressions when it has any: at once when
 * they were evaluated synchronously (most records), else once JSONata has answered.
 */
function buildItem(
  raw: RawRecord,
  builder: RecordBuilder,
  mapped: Mapped | undefined,
): IngestItem | Promise<IngestItem> {
  if (mapped === undefined || raw.problem !== undefined) return builder.build(raw);
  const outcome = mapped.evaluator.evaluate(raw.input, raw.row);
  if (outcome instanceof Promise) {
    return outcome.then((settled) => finishItem(raw, builder, mapped, settled));
  }
  return finishItem(raw, builder, mapped, outcome);
}

function finishItem(
  raw: RawRecord,
  builder: RecordBuilder,
  mapped: Mapped,
  outcome: MappingOutcome,
): IngestItem {
  const built = builder.build(raw, outcome);
  const item =
    mapped.anchors === undefined || outcome.kind !== 'values'
      ? built
      : anchored(built, mapped.anchors, outcome.anchor);
  if (item.kind === 'record' && mapped.evaluator.usesUnique) {
    // a later `$unique` does not give a name this record took
    const key = item.record[RESOURCES[mapped.settings.resource].keyField];
    if (typeof key === 'string') mapped.evaluator.names.claim(key, item.row);
  }
  return item;
}

/** A record's item once its anchor is matched: the record with its anchor, failed, or skipped. */
function anchored(item: IngestItem, anchors: AnchorRows, anchor: string | undefined): IngestItem {
  if (item.kind !== 'record') return item;
  const outcome = anchors.match(item.row, item.record, anchor);
  if (outcome.kind === 'matched') return { ...item, anchor: outcome.anchor };
  const { row, line, input, bytes } = item;
  if (outcome.kind === 'skipped') {
    return { kind: 'skipped', row, line, input, bytes, reason: outcome.reason };
  }
  const key = item.record[RESOURCES[anchors.resource].keyField];
  return {
    kind: 'invalid',
    row,
    line,
    input,
    bytes,
    errorCode: 'PORTER_ANCHOR_CONFLICT',
    key: typeof key === 'string' && key !== '' ? key : undefined,
    ...(outcome.holders !== undefined && outcome.holders.length > 0
      ? { alsoNames: outcome.holders }
      : {}),
    field: 'anchor',
    value: anchor,
    error: `row ${row}: ${outcome.error}`,
  };
}

async function open(
  reader: ByteReader,
  settings: IngestSettings,
  resolver: ColumnResolver,
): Promise<Opened> {
  try {
    const head = await reader.peek((bytes) => firstContentIndex(bytes) !== -1, FORMAT_PEEK_BYTES);
    if (firstContentIndex(head) === -1 && reader.exhausted) {
      throw new PorterError('PORTER_INPUT_EMPTY', 'The upload is empty: it holds no records.');
    }
    if (looksLikeUtf16(head)) {
      throw new PorterError(
        'PORTER_INPUT_UNREADABLE',
        `The upload is UTF-16 text, read as UTF-8; ${ENCODING_ADVICE}.`,
        { details: { line: 1 } },
      );
    }
    const format = detectFormat(settings, head);
    if (format === 'csv') {
      const source = await openCsvSource(reader, settings.delimiter, settings.maxRecordBytes);
      const columns = source.columns ?? [];
      const fields = resolveHeader(columns, resolver);
      return {
        header: { format, columns, fields, delimiter: source.delimiter },
        records: isPorterReport(columns) ? restoreReportCells(source.records) : source.records,
      };
    }
    const source =
      format === 'json'
        ? await openJsonSource(reader, settings.maxRecordBytes)
        : openNdjsonSource(reader, settings.maxRecordBytes);
    const first = await source.records.next();
    if (first.done === true) {
      if (emptyFeedAllowed(settings.mode, format, settings.emptySync)) {
        return { header: { format, columns: [], fields: {} }, records: source.records };
      }
      throw new PorterError('PORTER_INPUT_EMPTY', emptyMessage(format, settings.mode));
    }
    const columns = Object.keys(first.value[0].input);
    const fields: Record<string, string> = {};
    for (const column of columns) {
      const target = resolver.resolve(column);
      if (target.kind === 'field') fields[column] = target.field;
    }
    return { header: { format, columns, fields }, first: first.value, records: source.records };
  } catch (error) {
    await reader.close();
    throw error;
  }
}

/**
 * A feed that says, in its own format, that it holds no record today: a CSV header with no row
 * under it, a JSON empty array. For every mode but a sync it is a day with nothing to do (no new
 * hires): an import of 0 records. A sync refuses it: it would mean that everyone left.
 */
function emptyFeedAllowed(
  mode: IngestSettings['mode'],
  format: InputFormat,
  emptySync = false,
): boolean {
  return (mode !== 'sync' || emptySync) && (format === 'csv' || format === 'json');
}

async function* produce(
  opened: Promise<Opened>,
  reader: ByteReader,
  builder: RecordBuilder,
  pacer: Pacer,
  mapped: Mapped | undefined,
  mode: IngestSettings['mode'],
  emptySync: boolean,
): AsyncGenerator<IngestItem[]> {
  try {
    const { header, first, records } = await opened;
    if (mapped !== undefined) await readDirectory(mapped);
    let count = 0;
    if (first !== undefined) {
      yield* built(first, builder, pacer, mapped);
      count += first.length;
    }
    for await (const batch of records) {
      yield* built(batch, builder, pacer, mapped);
      count += batch.length;
    }
    if (count === 0 && !emptyFeedAllowed(mode, header.format, emptySync)) {
      throw new PorterError('PORTER_INPUT_EMPTY', emptyMessage(header.format, mode));
    }
  } finally {
    await reader.close();
    await mapped?.evaluator.close();
  }
}

/**
 * The items of a parser's batch, in one batch or more: a batch ends early when the slice is
 * used up, and the event loop gets its turn before the rest.
 */
async function* built(
  raws: readonly RawRecord[],
  builder: RecordBuilder,
  pacer: Pacer,
  mapped: Mapped | undefined,
): AsyncGenerator<IngestItem[]> {
  let items: IngestItem[] = [];
  for (const raw of raws) {
    const item = buildItem(raw, builder, mapped);
    items.push(item instanceof Promise ? await item : item);
    if (pacer.recordDone()) {
      yield items;
      items = [];
      await pacer.pause();
    }
  }
  if (items.length > 0) yield items;
}

/** A CSV that carries porter's own report columns is a report being uploaded again. */
function isPorterReport(columns: readonly string[]): boolean {
  return columns.some((column) => column.trim().toLowerCase().startsWith(REPORT_COLUMN_PREFIX));
}

/** Undoes the quote the report put before cells a spreadsheet would run as formulas. */
async function* restoreReportCells(
  batches: AsyncGenerator<RawRecord[]>,
): AsyncGenerator<RawRecord[]> {
  for await (const batch of batches) {
    for (const record of batch) {
      for (const [column, cell] of Object.entries(record.input)) {
        if (typeof cell === 'string') record.input[column] = restoreFormulaCell(cell);
      }
    }
    yield batch;
  }
}
