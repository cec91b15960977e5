/** Options of one ingest run, with their defaults, checked once before anything is read. */
import { checkEncoding } from './text-encoding.js';
import { isResourceName, type ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { IMPORT_MODES, type ImportMode } from '../model/import.js';
import type { InputFormat } from './detect-format.js';
import { INPUT_FORMATS } from './detect-format.js';
import { checkMappingFields, type Mapping } from './mapping.js';
import { DEFAULT_MAX_RECORD_BYTES } from './record-limit.js';

export interface IngestOptions {
  resource: ResourceName;
  mode: ImportMode;
  /** Default: from `fileName`'s extension, else `contentType`, else the first non-blank byte ('[' JSON, '{' NDJSON, else CSV). */
  format?: InputFormat;
  fileName?: string;
  contentType?: string;
  /** CSV cell delimiter: ',', ';', '\t' or '|'. Default: the candidate found most often outside quotes in the header line. */
  delimiter?: string;
  /** Separator of list items inside one CSV cell. Default '|'. */
  listSeparator?: string;
  /**
   * The upload's text encoding (a WHATWG label: windows-1252, latin1, utf-16le …). Default:
   * UTF-16 when the upload starts with its byte order mark, else UTF-8.
   */
  encoding?: string;
  /** Column renames, ignored columns and default values (see loadMapping). Default: none. */
  mapping?: Mapping;
  /** Whether an empty cell clears a field ("" / [] / {}) instead of leaving it as is. Default false. */
  emptyAsClear?: boolean;
  /** Largest record in bytes (CSV row, JSON element, NDJSON line); a larger one fails alone. Default 1 MiB. */
  maxRecordBytes?: number;
  /**
   * The target's records of the resource, read when the mapping calls `$unique` (names taken
   * there are not given). Default: none read; only the upload's own names count.
   */
  directory?: () => AsyncIterable<Record<string, unknown>>;
  /**
   * A sync of no records is taken in (not refused): a directory read whole that returned
   * nothing, whose sync is then held. Default false.
   */
  emptySync?: boolean;
}

/** The options with defaults applied. */
export interface IngestSettings {
  resource: ResourceName;
  mode: ImportMode;
  format?: InputFormat;
  fileName?: string;
  contentType?: string;
  delimiter?: string;
  listSeparator: string;
  /** The canonical encoding name, when one was given. */
  encoding?: string;
  mapping?: Mapping;
  emptyAsClear: boolean;
  maxRecordBytes: number;
  directory?: () => AsyncIterable<Record<string, unknown>>;
  emptySync: boolean;
}

export const CSV_DELIMITERS: readonly string[] = [',', ';', '\t', '|'];
export const DEFAULT_LIST_SEPARATOR = '|';

/** Spellings of tab that survive a command line or a query string. */
const TAB_ALIASES = new Set(['\\t', 'tab', 'TAB']);

function usage(message: string): PorterError {
  return new PorterError('PORTER_USAGE', message);
}

/** Checks the options and applies defaults; throws PORTER_USAGE naming the bad option. */
export function resolveIngestOptions(options: IngestOptions): IngestSettings {
  if (!isResourceName(options.resource)) {
    throw usage(`Unknown resource "${String(options.resource)}"; use users, groups or acls.`);
  }
  if (!IMPORT_MODES.includes(options.mode)) {
    throw usage(`Unknown mode "${String(options.mode)}"; use ${IMPORT_MODES.join(', ')}.`);
  }
  if (options.resource === 'acls' && options.mode === 'delete') {
    throw usage(
      'ACLs cannot be deleted through the admin interface (it offers read, create and update only); ' +
        'remove them in the product itself, or import with mode create, update or upsert.',
    );
  }
  if (options.format !== undefined && !INPUT_FORMATS.includes(options.format)) {
    throw usage(`Unknown format "${String(options.format)}"; use csv, json or ndjson.`);
  }
  let delimiter = options.delimiter;
  if (delimiter !== undefined && TAB_ALIASES.has(delimiter)) delimiter = '\t';
  if (delimiter !== undefined && !CSV_DELIMITERS.includes(delimiter)) {
    throw usage(`Unsupported delimiter ${JSON.stringify(delimiter)}; use ",", ";", tab or "|".`);
  }
  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes <= 0) {
    throw usage(`The record size limit must be a positive number of bytes, not ${maxRecordBytes}.`);
  }
  const listSeparator = options.listSeparator ?? DEFAULT_LIST_SEPARATOR;
  if (listSeparator.length === 0) {
    throw usage('The list separator cannot be empty; the default is "|".');
  }
  return {
    emptySync: options.emptySync === true,
    resource: options.resource,
    mode: options.mode,
    format: options.format,
    fileName: options.fileName,
    contentType: options.contentType,
    delimiter,
    listSeparator,
    encoding: checkEncoding(options.encoding),
    mapping: options.mapping,
    emptyAsClear: options.emptyAsClear ?? false,
    maxRecordBytes,
    directory: options.directory,
  };
}

/**
 * Checks the options and the mapping against the resource without reading anything, so a
 * caller can refuse a bad request (PORTER_USAGE / PORTER_MAPPING_INVALID) before it stores it.
 */
export function checkIngestOptions(options: IngestOptions): void {
  const settings = resolveIngestOptions(options);
  if (settings.mapping !== undefined) checkMappingFields(settings.mapping, settings.resource);
}
