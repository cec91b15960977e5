/**
 * One raw record → one item: columns to fields, values coerced, empty values handled, mapping
 * defaults added, keys checked. Every problem of the record is reported, the first one in
 * `field` / `value`.
 */
import { RESOURCES } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { unknownColumnsError, type ColumnResolver } from './columns.js';
import { keyTextProblem } from './canonical-key.js';
import { coerceJson, coerceText, showValue } from './coerce.js';
import { fieldKinds, isClearable, type FieldKind } from './field-kinds.js';
import type { MappingOutcome } from '../mapping/evaluator.js';
import type { IngestSettings } from './options.js';
import type { IngestItem, RawRecord, RecordErrorCode } from './types.js';
import { missingKey, recordWarnings, valueProblems } from './validate.js';

interface Problem {
  field?: string;
  value?: unknown;
  /** The problem without the row prefix. */
  message: string;
}

/** At most this many problems of one record are spelled out in its error; the rest counted. */
const MAX_LISTED_PROBLEMS = 5;

function clearedValue(kind: FieldKind): unknown {
  if (kind === 'stringList' || kind === 'integerList' || kind === 'referenceList') return [];
  if (kind === 'object') return {};
  return '';
}

/** Arrays and objects from defaults are copied so no two records share one. */
function copy(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

export class RecordBuilder {
  private readonly kinds: ReadonlyMap<string, FieldKind>;
  private readonly defaults: ReadonlyArray<readonly [string, unknown]>;
  /** Fields an empty value never clears: ids and natural keys name the record, they are not data. */
  private readonly neverCleared: ReadonlySet<string>;

  constructor(
    private readonly settings: IngestSettings,
    private readonly resolver: ColumnResolver,
  ) {
    const descriptor = RESOURCES[settings.resource];
    this.kinds = fieldKinds(settings.resource);
    this.neverCleared = new Set([descriptor.idField, descriptor.keyField]);
    this.defaults = this.prepareDefaults();
  }

  private prepareDefaults(): Array<readonly [string, unknown]> {
    const prepared: Array<readonly [string, unknown]> = [];
    for (const [field, given] of Object.entries(this.settings.mapping?.defaults ?? {})) {
      const kind = this.kinds.get(field);
      if (kind === undefined) continue; // checked by checkMappingFields already
      const coerced = coerceJson(kind, given, this.settings.listSeparator);
      if (coerced.kind === 'invalid') {
        throw new PorterError(
          'PORTER_MAPPING_INVALID',
          `Mapping file: default for "${field}": ${coerced.reason}.`,
          {
            details: { field, value: given },
          },
        );
      }
      if (coerced.kind === 'value') prepared.push([field, coerced.value]);
    }
    return prepared;
  }

  /** The item for one raw record; `computed` is what the mapping's expressions made of it. */
  build(raw: RawRecord, computed?: MappingOutcome): IngestItem {
    if (raw.problem !== undefined) {
      return this.invalid(raw, [raw.problem], {}, raw.problem.code ?? 'PORTER_ROW_INVALID');
    }
    if (computed?.kind === 'skip') {
      return {
        kind: 'skipped',
        row: raw.row,
        line: raw.line,
        input: raw.input,
        reason: computed.reason,
      };
    }
    if (computed?.kind === 'failed') {
      const field = computed.field;
      return this.invalid(
        raw,
        [{ field, message: `field "${field}": ${computed.message}` }],
        {},
        'PORTER_MAPPING_FAILED',
      );
    }
    const record: Record<string, unknown> = {};
    const columnOf = new Map<string, string>();
    const warnings: string[] = [];
    const problems: Problem[] = [];
    for (const column of Object.keys(raw.input)) {
      const given = raw.input[column];
      const target = this.resolver.resolve(column);
      if (target.kind === 'ignore') continue;
      if (target.kind === 'unknown') {
        // like an unknown CSV column, an unknown JSON key stops the import: nothing is sent
        // before the whole upload is read, so stopping at any record is still in time
        const error = unknownColumnsError([column], this.settings.resource);
        throw new PorterError(error.code, `Row ${raw.row}: ${error.message}`, {
          details: { ...error.details, row: raw.row, field: column },
        });
      }
      if (target.kind === 'service') {
        if (given !== '' && given !== null && given !== undefined) {
          warnings.push(`column "${column}" is supplied by the service; its value was not sent`);
        }
        continue;
      }
      const field = target.field;
      const earlier = columnOf.get(field);
      if (earlier !== undefined) {
        problems.push({
          field,
          value: given,
          message: `field "${field}" is given twice (${showValue(earlier)} and ${showValue(column)})`,
        });
        continue;
      }
      columnOf.set(field, column);
      const kind = this.kinds.get(field) ?? 'string';
      const coerced = raw.text
        ? coerceText(kind, given as string, this.settings.listSeparator)
        : coerceJson(kind, given, this.settings.listSeparator);
      if (coerced.kind === 'value') record[field] = coerced.value;
      else if (coerced.kind === 'invalid')
        problems.push({ field, value: given, message: `field "${field}": ${coerced.reason}` });
      else if (this.settings.emptyAsClear && !this.neverCleared.has(field)) {
        if (isClearable(kind)) record[field] = clearedValue(kind);
        else warnings.push(`field "${field}" is empty and cannot be cleared (${kind}); left as is`);
      }
    }
    if (computed !== undefined) this.addComputed(computed.values, record, problems, warnings);
    for (const [field, value] of this.defaults) {
      if (!Object.hasOwn(record, field)) record[field] = copy(value);
    }
    const keyProblem = this.keyProblem(record);
    const missing =
      keyProblem === undefined
        ? missingKey(this.settings.resource, this.settings.mode, record)
        : undefined;
    if (keyProblem !== undefined) problems.push(keyProblem);
    if (missing !== undefined) {
      const column = columnOf.get(missing.field);
      problems.push({
        field: missing.field,
        value: column === undefined ? undefined : raw.input[column],
        message: `field "${missing.field}" ${missing.reason}`,
      });
    }
    for (const problem of valueProblems(this.settings.resource, record)) {
      const column = columnOf.get(problem.field);
      problems.push({
        field: problem.field,
        value: column === undefined ? record[problem.field] : raw.input[column],
        message: `field "${problem.field}" ${problem.reason}`,
      });
    }
    if (problems.length > 0) return this.invalid(raw, problems, record);
    warnings.push(...recordWarnings(this.settings.resource, record));
    return { kind: 'record', row: raw.row, line: raw.line, input: raw.input, record, warnings };
  }

  /** Computed values, coerced as JSON values are. */
  private addComputed(
    values: Record<string, unknown>,
    record: Record<string, unknown>,
    problems: Problem[],
    warnings: string[],
  ): void {
    for (const [field, given] of Object.entries(values)) {
      const kind = this.kinds.get(field) ?? 'string';
      const coerced = coerceJson(kind, given, this.settings.listSeparator);
      if (coerced.kind === 'value') record[field] = coerced.value;
      else if (coerced.kind === 'invalid') {
        problems.push({
          field,
          value: given,
          message: `field "${field}" (computed): ${coerced.reason}`,
        });
      } else if (this.settings.emptyAsClear && !this.neverCleared.has(field)) {
        if (isClearable(kind)) record[field] = clearedValue(kind);
        else warnings.push(`field "${field}" is empty and cannot be cleared (${kind}); left as is`);
      }
    }
  }

  /** A username or group name that cannot be a key (see canonical-key.ts). */
  private keyProblem(record: Record<string, unknown>): Problem | undefined {
    if (this.settings.resource === 'acls') return undefined;
    const field = RESOURCES[this.settings.resource].keyField;
    const key = record[field];
    // a blank key is a missing one, said by missingKey
    if (typeof key !== 'string' || key.trim() === '') return undefined;
    const reason = keyTextProblem(key);
    if (reason === undefined) return undefined;
    delete record[field];
    return { field, value: key, message: `field "${field}" ${reason}` };
  }

  private invalid(
    raw: RawRecord,
    problems: readonly Problem[],
    record: Record<string, unknown> = {},
    errorCode: RecordErrorCode = 'PORTER_ROW_INVALID',
  ): IngestItem {
    const [first] = problems;
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((problem) => problem.message);
    const more = problems.length - listed.length;
    const text = listed.join('; ') + (more > 0 ? `; and ${more} more problems` : '');
    const key = record[RESOURCES[this.settings.resource].keyField];
    return {
      kind: 'invalid',
      row: raw.row,
      line: raw.line,
      input: raw.input,
      errorCode,
      key:
        typeof key === 'string' && key.trim() !== '' && keyTextProblem(key) === undefined
          ? key
          : undefined,
      field: first.field,
      value: first.value,
      error: `row ${raw.row}: ${text}`,
    };
  }
}
