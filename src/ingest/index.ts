/**
 * Ingest: an upload (CSV, JSON or NDJSON) in, validated records out, streaming and pure (no
 * Redis, no HTTP).
 *
 * ```ts
 * const { header, items } = ingest(stream, { resource: 'users', mode: 'upsert', fileName });
 * console.log((await header).columns); // optional; may be awaited before or while iterating
 * for await (const item of items) {
 *   if (item.kind === 'record') stage(item.row, item.record, item.warnings);
 *   else reject(item.row, item.field, item.error); // errorCode PORTER_ROW_INVALID
 * }
 * ```
 *
 * File-level problems are PorterErrors: from `ingest()` itself for bad options or mapping
 * (PORTER_USAGE, PORTER_MAPPING_INVALID), and from `header` / `items` for the upload
 * (PORTER_INPUT_EMPTY, PORTER_INPUT_UNREADABLE, PORTER_INPUT_UNKNOWN_COLUMN), which may come
 * after some items were produced; nothing should be sent before `items` has ended. A run whose
 * `items` is never iterated does not close its source: iterate it, or call `items.return()`
 * after starting it.
 *
 * Decisions where the rules were silent:
 * - A CSV row with more or fewer cells than the header is an invalid item (extra cells are kept
 *   in `input` as "#4", "#5"...), not a broken file. Blank rows and rows of empty cells are
 *   skipped and not numbered. A column named twice in the header is PORTER_INPUT_UNREADABLE.
 * - JSON/NDJSON have no header: an unknown key, or an element that is not an object, makes that
 *   record invalid. `header.columns` are the first record's keys.
 * - JSON `""` is a value for string fields (JSON can tell it from absent); `null` is "empty"
 *   (left as is, or cleared with emptyAsClear), except for `searchFilter` where it is a value.
 * - emptyAsClear never clears an id or the natural key. A delete may name users by `userId` and
 *   groups by `id` instead of the key, as the spec's DELETE allows.
 * - A record larger than `maxRecordBytes` (default 1 MiB) is not kept: the parser reads on to its
 *   end and the record fails alone with PORTER_RECORD_TOO_LARGE. A runaway CSV quote therefore
 *   reads to the end of the upload in bounded memory and ends it unreadable (quote not closed).
 */
export { ingest, type IngestRun } from './ingest.js';
export type { IngestSource } from './byte-source.js';
export { checkIngestOptions, type IngestOptions } from './options.js';
export { CSV_DELIMITERS, DEFAULT_LIST_SEPARATOR } from './options.js';
export { DEFAULT_MAX_RECORD_BYTES } from './record-limit.js';
export type { IngestHeader, IngestItem } from './types.js';
export { INPUT_FORMATS, detectFormat, type InputFormat } from './detect-format.js';
export { loadMapping, checkMappingFields, type Mapping } from './mapping.js';
export { fieldKinds, type FieldKind } from './field-kinds.js';
export { lookalikeKey } from './lookalike.js';
export { keyTextProblem } from './canonical-key.js';
