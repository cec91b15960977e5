/**
 * One raw record → one item: columns to fields, values coerced, empty values handled, mapping
 * defaults added, keys checked. Every problem of the record is reported, the first one in
 * `field` / `value`.
 */
import { RESOURCES } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { unknownColumnsError, type ColumnResolver } from './columns.js';
import { keyTextProblem } from './canonical-key.js';
import { coerceJson, coerceText, showValue, type Coerced } from './coerce.js';
import { fieldKinds, isClearable, type FieldKind } from './field-kinds.js';
import type { MappingOutcome } from '../mapping/evaluator.js';
import type { IngestSettings } from './options.js';
import type { IngestItem, RawRecord, RecordErrorCode } from './types.js';
import { missingKey, recordWarnings, valueProblem } from './validate.js';

interface Problem {
  field?: string;
  value?: unknown;
  /** The problem without the row prefix. */
  message: string;
}

/** A record's fields on their way: what the checks at the end need. */
interface Draft {
  record: Record<string, unknown>;
  /** Field → the column that gave it. */
  columnOf: ReadonlyMap<string, string>;
  /** Made on the first one: most records have none. */
  warnings: string[] | undefined;
  problems: Problem[] | undefined;
}

/** What one column of a CSV header gives: a field (`kind` undefined: supplied by the service). */
interface ColumnStep {
  column: string;
  field: string;
  kind: FieldKind | undefined;
}

interface ColumnPlan {
  /** The columns that fill or name a field, in header order; ignored ones left out. */
  steps: ColumnStep[];
  columnOf: ReadonlyMap<string, string>;
  /**
   * Every column is a text field of its own name, and nothing is added: a row without an empty
   * cell is its own record (the input object serves as both).
   */
  same: boolean;
}

/** The warnings of every record that has none: never written to. */
const NO_WARNINGS: readonly string[] = Object.freeze([]);

function warn(draft: Draft, warning: string): void {
  (draft.warnings ??= []).push(warning);
}

function problem(draft: Draft, found: Problem): void {
  (draft.problems ??= []).push(found);
}

function noEmptyCell(input: Record<string, unknown>, steps: readonly ColumnStep[]): boolean {
  for (const step of steps) if (input[step.column] === '') return false;
  return true;
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
  /** The plan of the last CSV header seen (an upload has one). */
  private plan?: { columns: readonly string[]; plan: ColumnPlan | undefined };

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
      return this.invalid(
        raw,
        [raw.problem],
        this.keyRecord(raw),
        raw.problem.code ?? 'PORTER_ROW_INVALID',
      );
    }
    if (computed?.kind === 'skip') {
      return {
        kind: 'skipped',
        row: raw.row,
        line: raw.line,
        input: raw.input,
        bytes: raw.bytes,
        reason: computed.reason,
      };
    }
    if (computed?.kind === 'failed') {
      const field = computed.field;
      return this.invalid(
        raw,
        [{ field, message: `field "${field}": ${computed.message}` }],
        this.keyRecord(raw, computed.values),
        'PORTER_MAPPING_FAILED',
      );
    }
    const plan =
      computed === undefined && raw.columns !== undefined && raw.text
        ? this.planOf(raw.columns)
        : undefined;
    const draft = plan === undefined ? this.fromInput(raw) : this.fromPlan(raw, plan);
    if (computed !== undefined) this.addComputed(computed.values, draft);
    return this.finish(raw, draft);
  }

  /**
   * The plan of a CSV header: each column's field and kind, found once for every row under it.
   * Undefined when a row's keys may differ from the header or come in another order (a name
   * given twice, `__proto__`, a name of digits, which an object puts first) or a column cannot
   * be planned: such rows take the general way.
   */
  private planOf(columns: readonly string[]): ColumnPlan | undefined {
    if (this.plan?.columns !== columns) this.plan = { columns, plan: this.makePlan(columns) };
    return this.plan.plan;
  }

  private makePlan(columns: readonly string[]): ColumnPlan | undefined {
    const plain = (column: string): boolean => column !== '__proto__' && !/^\d+$/.test(column);
    if (new Set(columns).size !== columns.length || !columns.every(plain)) return undefined;
    const steps: ColumnStep[] = [];
    const columnOf = new Map<string, string>();
    for (const column of columns) {
      const target = this.resolver.resolve(column);
      if (target.kind === 'ignore') continue;
      if (target.kind === 'unknown') return undefined;
      if (target.kind === 'service') {
        steps.push({ column, field: target.field, kind: undefined });
        continue;
      }
      const { field } = target;
      if (columnOf.has(field)) return undefined;
      columnOf.set(field, column);
      steps.push({ column, field, kind: this.kinds.get(field) ?? 'string' });
    }
    const same =
      this.defaults.length === 0 &&
      steps.length === columns.length &&
      steps.every(
        (step) =>
          step.field === step.column && (step.kind === 'string' || step.kind === 'nullableString'),
      );
    return { steps, columnOf, same };
  }

  /** A CSV row under a planned header: the same as fromInput, without looking anything up. */
  private fromPlan(raw: RawRecord, plan: ColumnPlan): Draft {
    const { input } = raw;
    if (plan.same && noEmptyCell(input, plan.steps)) {
      return { record: input, columnOf: plan.columnOf, warnings: undefined, problems: undefined };
    }
    const draft: Draft = {
      record: {},
      columnOf: plan.columnOf,
      warnings: undefined,
      problems: undefined,
    };
    const { record } = draft;
    for (const step of plan.steps) {
      const given = input[step.column] as string;
      const { field, kind } = step;
      if (kind === undefined) {
        if (given !== '') this.serviceWarning(draft, step.column);
      } else if (kind === 'string' || kind === 'nullableString') {
        if (given !== '') record[field] = given;
        else this.empty(draft, field, kind);
      } else {
        this.coerced(
          draft,
          field,
          kind,
          given,
          coerceText(kind, given, this.settings.listSeparator),
        );
      }
    }
    return draft;
  }

  /** The fields of any record: its keys resolved one by one. */
  private fromInput(raw: RawRecord): Draft {
    const draft: Draft = {
      record: {},
      columnOf: new Map(),
      warnings: undefined,
      problems: undefined,
    };
    const columnOf = draft.columnOf as Map<string, string>;
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
        if (given !== '' && given !== null && given !== undefined)
          this.serviceWarning(draft, column);
        continue;
      }
      const field = target.field;
      const earlier = columnOf.get(field);
      if (earlier !== undefined) {
        problem(draft, {
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
      this.coerced(draft, field, kind, given, coerced);
    }
    return draft;
  }

  private coerced(
    draft: Draft,
    field: string,
    kind: FieldKind,
    given: unknown,
    coerced: Coerced,
  ): void {
    if (coerced.kind === 'value') draft.record[field] = coerced.value;
    else if (coerced.kind === 'invalid')
      problem(draft, { field, value: given, message: `field "${field}": ${coerced.reason}` });
    else this.empty(draft, field, kind);
  }

  /** An empty value: left as is, or cleared with emptyAsClear. */
  private empty(draft: Draft, field: string, kind: FieldKind): void {
    if (!this.settings.emptyAsClear || this.neverCleared.has(field)) return;
    if (isClearable(kind)) draft.record[field] = clearedValue(kind);
    else warn(draft, `field "${field}" is empty and cannot be cleared (${kind}); left as is`);
  }

  private serviceWarning(draft: Draft, column: string): void {
    warn(draft, `column "${column}" is supplied by the service; its value was not sent`);
  }

  /** Defaults, the key and the values checked: the item. */
  private finish(raw: RawRecord, draft: Draft): IngestItem {
    const { columnOf } = draft;
    let { record } = draft;
    for (const [field, value] of this.defaults) {
      if (!Object.hasOwn(record, field)) record[field] = copy(value);
    }
    const keyProblem = this.keyProblem(record);
    if (keyProblem !== undefined) {
      // the input stays as given (the record may be the input itself)
      if (record === raw.input) record = { ...record };
      delete record[keyProblem.field!];
    }
    const missing =
      keyProblem === undefined
        ? missingKey(this.settings.resource, this.settings.mode, record)
        : undefined;
    if (keyProblem !== undefined) problem(draft, keyProblem);
    if (missing !== undefined) {
      const column = columnOf.get(missing.field);
      problem(draft, {
        field: missing.field,
        value: column === undefined ? undefined : raw.input[column],
        message: `field "${missing.field}" ${missing.reason}`,
      });
    }
    const invalidValue = valueProblem(this.settings.resource, record);
    if (invalidValue !== undefined) {
      const column = columnOf.get(invalidValue.field);
      problem(draft, {
        field: invalidValue.field,
        value: column === undefined ? record[invalidValue.field] : raw.input[column],
        message: `field "${invalidValue.field}" ${invalidValue.reason}`,
      });
    }
    if (draft.problems !== undefined) return this.invalid(raw, draft.problems, record);
    const more = recordWarnings(this.settings.resource, record);
    const warnings =
      more === undefined ? (draft.warnings ?? NO_WARNINGS) : [...(draft.warnings ?? []), ...more];
    return {
      kind: 'record',
      row: raw.row,
      line: raw.line,
      input: raw.input,
      bytes: raw.bytes,
      record,
      warnings,
    };
  }

  /**
   * What a record that failed before it was built still gives, for its key: its columns read as
   * usual, and the values the mapping computed before it failed. A record that fails names its
   * key whenever the key can be read, so a sync never takes it for one its file leaves out.
   */
  private keyRecord(raw: RawRecord, computed?: Record<string, unknown>): Record<string, unknown> {
    try {
      const draft = this.fromInput(raw);
      if (computed !== undefined) this.addComputed(computed, draft);
      return draft.record;
    } catch {
      // a column the upload may not have (refused for the whole upload where it is read as
      // a record): the key is not read from this one
      return {};
    }
  }

  /** Computed values, coerced as JSON values are. */
  private addComputed(values: Record<string, unknown>, draft: Draft): void {
    for (const [field, given] of Object.entries(values)) {
      const kind = this.kinds.get(field) ?? 'string';
      const coerced = coerceJson(kind, given, this.settings.listSeparator);
      if (coerced.kind === 'invalid') {
        problem(draft, {
          field,
          value: given,
          message: `field "${field}" (computed): ${coerced.reason}`,
        });
      } else {
        this.coerced(draft, field, kind, given, coerced);
      }
    }
  }

  /** A username or group name that cannot be a key (see canonical-key.ts); the caller drops it. */
  private keyProblem(record: Record<string, unknown>): Problem | undefined {
    if (this.settings.resource === 'acls') return undefined;
    const field = RESOURCES[this.settings.resource].keyField;
    const key = record[field];
    // a blank key is a missing one, said by missingKey
    if (typeof key !== 'string' || key.trim() === '') return undefined;
    const reason = keyTextProblem(key);
    if (reason === undefined) return undefined;
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
      bytes: raw.bytes,
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
