/** Options of an upload, from multipart fields or query parameters, checked once. */
import { checkEncoding } from '../ingest/text-encoding.js';
import { z } from 'zod';
import { RESOURCE_NAMES } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import {
  DEFAULT_LIST_SEPARATOR,
  loadMapping,
  type InputFormat,
  type Mapping,
} from '../ingest/index.js';
import {
  IMPORT_MODES,
  MISSING_ACTIONS,
  type ImportOptions,
  type SyncOptions,
} from '../model/import.js';
import { parseProtectedText } from '../sync/sync-options.js';
import { TARGET_NAME, TARGET_NAME_TEXT } from '../targets/target-file.js';
import { checkStreamOption } from '../imports/stream-option.js';

const flag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no', ''])])
  .transform((value) => value === true || value === 'true' || value === '1' || value === 'yes');

export const importFieldsSchema = z.object({
  /** The target (named admin server) written to. @defaultValue `default` */
  target: z.string().regex(TARGET_NAME, TARGET_NAME_TEXT).optional(),
  resource: z.enum(RESOURCE_NAMES as [string, ...string[]]),
  mode: z.enum(IMPORT_MODES as [string, ...string[]]),
  batchSize: z.coerce.number().int().positive().max(10_000).default(100),
  /** Default: the mapping's listSeparator, else "|". */
  listSeparator: z.string().min(1).max(3).optional(),
  delimiter: z.enum([',', ';', '\t', '|', 'tab']).optional(),
  /** The upload's text encoding (windows-1252, latin1, utf-16le …); default UTF-8, or a UTF-16 BOM's. */
  encoding: z.string().min(1).max(40).optional(),
  emptyAsClear: flag.default(false),
  allowAdmin: flag.default(false),
  allowLookalike: flag.default(false),
  maxFailures: z
    .string()
    .regex(/^\d+%?$/, 'a number, or a percentage like 5%')
    .optional(),
  format: z.enum(['csv', 'json', 'ndjson']).optional(),
  lookup: z.enum(['auto', 'snapshot', 'each']).optional(),
  dryRun: flag.default(false),
  /** Send each batch once its records are in, before the upload is whole (docs/streaming.md). */
  stream: flag.default(false),
  /** Mapping file content as JSON text. */
  mapping: z.string().optional(),
  /** Sync only: lock, delete or ignore the server records the file leaves out. */
  missing: z.enum(MISSING_ACTIONS as [string, ...string[]]).optional(),
  maxDeletes: z
    .string()
    .regex(/^\d+%?$/, 'a number, or a percentage like 5%')
    .optional(),
  /** Protected keys, one per line (the content of a --protect file). */
  protect: z
    .string()
    .max(16 * 1024 * 1024)
    .optional(),
  scopeGroup: z.string().optional(),
  scopeMatch: z.string().optional(),
});

/** The fields an upload takes, as query parameters or form fields. */
export const IMPORT_FIELD_NAMES: readonly string[] = Object.keys(importFieldsSchema.shape);

export interface ParsedImportRequest {
  options: ImportOptions;
  format?: InputFormat;
  mapping?: Mapping;
}

/** Checks upload options; throws PORTER_USAGE naming the first bad field. */
export function parseImportFields(fields: Record<string, unknown>): ParsedImportRequest {
  const parsed = importFieldsSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'options');
    throw new PorterError('PORTER_USAGE', `${name}: ${issue?.message ?? 'invalid value'}`, {
      details: { field: name },
    });
  }
  const value = parsed.data;
  checkStreamOption({ mode: value.mode as ImportOptions['mode'], stream: value.stream });
  let mapping: Mapping | undefined;
  if (value.mapping !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(value.mapping);
    } catch (error) {
      throw new PorterError('PORTER_MAPPING_INVALID', 'mapping: not valid JSON', { cause: error });
    }
    mapping = loadMapping(json);
  }
  return {
    options: {
      ...(value.target !== undefined ? { target: value.target } : {}),
      resource: value.resource as ImportOptions['resource'],
      mode: value.mode as ImportOptions['mode'],
      batchSize: value.batchSize,
      // a field of the request wins over the mapping
      listSeparator: value.listSeparator ?? mapping?.listSeparator ?? DEFAULT_LIST_SEPARATOR,
      delimiter: value.delimiter === 'tab' ? '\t' : (value.delimiter ?? mapping?.delimiter),
      ...(value.encoding !== undefined
        ? { encoding: checkEncoding(value.encoding, 'encoding') }
        : {}),
      emptyAsClear: value.emptyAsClear,
      allowAdmin: value.allowAdmin,
      allowLookalike: value.allowLookalike,
      maxFailures: value.maxFailures,
      lookup: value.lookup,
      dryRun: value.dryRun,
      ...(value.stream ? { stream: true } : {}),
      sync: syncFields(value),
    },
    format: value.format,
    mapping,
  };
}

/** The sync's fields as given (checked and completed when the import starts); none: undefined. */
function syncFields(value: z.infer<typeof importFieldsSchema>): SyncOptions | undefined {
  const given = [
    value.missing,
    value.maxDeletes,
    value.protect,
    value.scopeGroup,
    value.scopeMatch,
  ];
  if (value.mode !== 'sync' && given.every((field) => field === undefined)) return undefined;
  return {
    missing: value.missing as SyncOptions['missing'],
    maxDeletes: value.maxDeletes,
    protect: value.protect === undefined ? undefined : parseProtectedText(value.protect),
    scopeGroup: value.scopeGroup,
    scopeMatch: value.scopeMatch,
  };
}
