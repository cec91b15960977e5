/**
 * A preview of an upload before it is queued: its columns, the field each one fills (porter's
 * own matching, and under a proposed mapping), and its first records with their validation
 * errors. Reads only the head it is given, and at most `limit` records of it.
 */
import { decodedHead } from './text-encoding.js';
import { RESOURCES } from '../admin/resources.js';
import { isPorterError, PorterError } from '../errors/porter-error.js';
import { ByteReader } from './byte-source.js';
import { ColumnResolver, unknownColumnsError, type ColumnTarget } from './columns.js';
import { openCsvSource } from './csv-source.js';
import { detectFormat, firstContentIndex, type InputFormat } from './detect-format.js';
import { fieldKinds, type FieldKind } from './field-kinds.js';
import { ingest } from './ingest.js';
import { columnKey, type Mapping } from './mapping.js';
import { resolveIngestOptions, type IngestOptions } from './options.js';

/** Records a preview shows at most. */
export const PREVIEW_MAX_RECORDS = 50;
/** Records a preview shows unless asked for fewer. */
export const PREVIEW_DEFAULT_RECORDS = 10;

export interface PreviewOptions extends IngestOptions {
  /** Records to show. @defaultValue PREVIEW_DEFAULT_RECORDS (at most PREVIEW_MAX_RECORDS) */
  limit?: number;
  /** Whether `head` is only the beginning of the upload: a broken last record is then expected. */
  partial?: boolean;
}

export interface PreviewColumn {
  name: string;
  /** What porter makes of the column without a mapping: a field, `ignore`, or null (no match). */
  suggested: string | null;
  /** What the column does under the proposed mapping. */
  target: ColumnTarget['kind'];
  /** The field it fills, for targets `field` and `service`. */
  field?: string;
}

export interface PreviewField {
  name: string;
  kind: FieldKind;
  /** The natural key (username, name). */
  key: boolean;
  /** The server-generated id. */
  id: boolean;
  /** Supplied by the service: accepted, never sent. */
  service: boolean;
}

export interface PreviewRecord {
  row: number;
  line?: number;
  valid: boolean;
  /** Left out by the mapping's `when` (`error` says why). */
  skipped?: boolean;
  input: Record<string, unknown>;
  /** Valid records: the coerced fields that would be sent. */
  record?: Record<string, unknown>;
  warnings?: string[];
  key?: string;
  errorCode?: string;
  field?: string;
  error?: string;
}

export interface UploadPreview {
  format: InputFormat;
  delimiter?: string;
  columns: PreviewColumn[];
  fields: PreviewField[];
  records: PreviewRecord[];
  /** A problem that would stop the import (unmatched column, two columns for one field...). */
  problem?: { code: string; message: string };
}

/** The fields of a resource as the console offers them. */
export function describeFields(resource: IngestOptions['resource']): PreviewField[] {
  const descriptor = RESOURCES[resource];
  return [...fieldKinds(resource)].map(([name, kind]) => ({
    name,
    kind,
    key: name === descriptor.keyField,
    id: name === descriptor.idField,
    service: descriptor.serviceFields.includes(name),
  }));
}

/** Previews the head of an upload (see the module comment). */
export async function previewUpload(
  head: Uint8Array,
  options: PreviewOptions,
): Promise<UploadPreview> {
  const resolved = resolveIngestOptions(options);
  // the head as UTF-8: decoded from the upload's encoding, or a UTF-16 byte order mark's; what
  // reads it next reads UTF-8
  head = decodedHead(head, resolved.encoding);
  const settings = { ...resolved, encoding: 'utf-8' };
  const limit = Math.min(
    PREVIEW_MAX_RECORDS,
    Math.max(1, Math.floor(options.limit ?? PREVIEW_DEFAULT_RECORDS)),
  );
  const found = await readColumns(head, settings);
  const plain = new ColumnResolver(settings.resource);
  const chosen = new ColumnResolver(settings.resource, settings.mapping);
  const columns: PreviewColumn[] = found.columns.map((name) => {
    const own = plain.resolve(name);
    const target = chosen.resolve(name);
    return {
      name,
      suggested: own.kind === 'ignore' ? 'ignore' : own.kind === 'unknown' ? null : own.field,
      target: target.kind,
      ...(target.kind === 'field' || target.kind === 'service' ? { field: target.field } : {}),
    };
  });
  const unknown = columns.filter((column) => column.target === 'unknown');
  let problem: UploadPreview['problem'];
  if (unknown.length > 0) {
    const error = unknownColumnsError(
      unknown.map((column) => column.name),
      settings.resource,
    );
    problem = { code: error.code, message: error.message };
  }
  // unmatched columns are left out of the records shown, as a mapping ignoring them would do
  const mapping: Mapping = {
    ...settings.mapping,
    columns: settings.mapping?.columns ?? {},
    ignore: [...(settings.mapping?.ignore ?? []), ...distinctNames(unknown)],
    defaults: settings.mapping?.defaults ?? {},
  };
  const records: PreviewRecord[] = [];
  const run = ingest(head, { ...settings, format: found.format, mapping });
  try {
    for await (const item of run.items) {
      if (item.kind === 'record') {
        records.push({
          row: item.row,
          line: item.line,
          valid: true,
          input: item.input,
          record: item.record,
          ...(item.warnings.length > 0 ? { warnings: [...item.warnings] } : {}),
        });
      } else if (item.kind === 'skipped') {
        records.push({
          row: item.row,
          line: item.line,
          valid: false,
          skipped: true,
          input: item.input,
          error: item.reason,
        });
      } else {
        records.push({
          row: item.row,
          line: item.line,
          valid: false,
          input: item.input,
          key: item.key,
          errorCode: item.errorCode,
          field: item.field,
          error: item.error,
        });
      }
      if (records.length >= limit) break;
    }
  } catch (error) {
    if (!isPorterError(error)) throw error;
    // the cut end of a partial head breaks its last record: not a problem of the upload
    if (!(options.partial === true && records.length > 0)) {
      problem ??= { code: error.code, message: error.message };
    }
  }
  // the head ended before `limit` records: its last record may be cut short, so is not shown
  if (options.partial === true && records.length < limit) records.pop();
  return {
    format: found.format,
    ...(found.delimiter === undefined ? {} : { delimiter: found.delimiter }),
    columns,
    fields: describeFields(settings.resource),
    records,
    ...(problem === undefined ? {} : { problem }),
  };
}

function distinctNames(columns: readonly PreviewColumn[]): string[] {
  const seen = new Set<string>();
  const names: string[] = [];
  for (const column of columns) {
    const key = columnKey(column.name);
    if (seen.has(key)) continue;
    seen.add(key);
    names.push(column.name);
  }
  return names;
}

interface FoundColumns {
  format: InputFormat;
  columns: string[];
  delimiter?: string;
}

/** The columns of the head, whatever fields they match: a CSV header, or a first record's keys. */
async function readColumns(
  head: Uint8Array,
  settings: ReturnType<typeof resolveIngestOptions>,
): Promise<FoundColumns> {
  if (firstContentIndex(head) === -1) {
    throw new PorterError('PORTER_INPUT_EMPTY', 'The upload is empty: it holds no records.');
  }
  const format = detectFormat(settings, head);
  if (format === 'csv') {
    const reader = new ByteReader(head);
    try {
      const source = await openCsvSource(reader, settings.delimiter, settings.maxRecordBytes);
      await source.records.return(undefined);
      return { format, columns: source.columns ?? [], delimiter: source.delimiter };
    } finally {
      await reader.close();
    }
  }
  // JSON and NDJSON have no header: an unknown key fails its record, never the upload
  const run = ingest(head, { ...settings, format });
  try {
    const header = await run.header;
    return { format, columns: header.columns };
  } finally {
    await run.items.return(undefined);
  }
}
