/**
 * The JSON body of POST /v1/source-imports: a source's name, `incremental`, and the options
 * `porter import --source` and `porter sync --source` take, the sync's rails among them. The
 * options of a file (delimiter, encoding, format) are not taken: a directory's rows are not a
 * file. The options are checked by the upload's own parser (import-request.ts), once.
 */
import { z } from 'zod';
import { PorterError } from '../errors/porter-error.js';
import type { SourceImportRequest } from '../app/source-import.js';
import { importFieldsSchema, parseImportFields } from './import-request.js';

/** The upload's fields but those that say how to read a file. */
const optionsSchema = importFieldsSchema.omit({ delimiter: true, encoding: true, format: true });

const sourceImportSchema = optionsSchema.extend({
  /** The source's name in PORTER_SOURCES_FILE (GET /v1/sources). */
  source: z.string().min(1).max(100),
  resource: z.enum(['users', 'groups']),
  /** Only the entries changed since the last read, created or updated (never locked or deleted). */
  incremental: z.boolean().default(false),
  /** The mapping, as a JSON object or as its JSON text. */
  mapping: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
  /** Protected keys: a list, or one key per line. */
  protect: z
    .union([z.array(z.string().max(1024)).max(1_000_000), z.string().max(16 * 1024 * 1024)])
    .optional(),
});

/** The body's fields, for its closed JSON schema. */
export const SOURCE_IMPORT_FIELD_NAMES: readonly string[] = Object.keys(sourceImportSchema.shape);

/** Checks the body; throws PORTER_USAGE naming the first bad field. */
export function parseSourceImportBody(body: unknown): SourceImportRequest {
  const parsed = sourceImportSchema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'body');
    throw new PorterError('PORTER_USAGE', `${name}: ${issue?.message ?? 'invalid value'}`, {
      details: { field: name },
    });
  }
  const { source, incremental, mapping, protect, ...fields } = parsed.data;
  const { options, mapping: loaded } = parseImportFields({
    ...fields,
    ...(mapping !== undefined
      ? { mapping: typeof mapping === 'string' ? mapping : JSON.stringify(mapping) }
      : {}),
    ...(protect !== undefined
      ? { protect: Array.isArray(protect) ? protect.join('\n') : protect }
      : {}),
  });
  return {
    source,
    incremental,
    options: { ...options, ...(loaded !== undefined ? { mapping: loaded } : {}) },
  };
}
