/**
 * Runs a mapping's expressions over one record at a time: `when` first, then each computed
 * field. Compiled once per import; records are evaluated one after the other, in upload order
 * (`$unique` depends on it). Each expression is bounded (compile.ts); one that goes past its
 * bounds on a few records is not run again for the rest of the upload, whose records fail at
 * once, so a pathological mapping costs a bounded time whatever the upload's size.
 */
import type { Mapping } from '../ingest/mapping.js';
import { checkExpressions } from './check-expressions.js';
import { EXPRESSION_MAX_VALUE, type CompiledExpression } from './compile.js';
import { GIVE_UP } from './fast-path.js';
import { MappingFunctionError } from './function-error.js';
import type { FunctionScope } from './functions.js';
import { ValueTables } from './tables.js';
import { UniqueNames } from './unique-names.js';

export type MappingOutcome =
  /** The computed fields (a field the expression gave nothing for is absent). */
  | { kind: 'values'; values: Record<string, unknown> }
  | { kind: 'skip'; reason: string }
  | { kind: 'failed'; field: string; message: string };

/** Records an expression may go past its bounds on before it is given up for the upload. */
const BOUND_FAILURES_BEFORE_GIVING_UP = 3;
/** JSONata's codes for a time, depth or size bound reached. */
const BOUND_CODES = new Set(['D1011', 'D1012', 'D2014', 'D2015']);

interface Slot {
  expression: CompiledExpression;
  /** The field it computes (undefined for `when`). */
  field?: string;
  /** Rows on which it went past its bounds. */
  boundRows: number[];
}

export class MappingEvaluator {
  readonly names = new UniqueNames();
  readonly tables: ValueTables;
  readonly usesUnique: boolean;
  /** The fields the mapping computes. */
  readonly computed: ReadonlySet<string>;
  private readonly scope: FunctionScope;
  private readonly when?: Slot;
  private readonly fields: Slot[];

  constructor(mapping: Mapping) {
    this.tables = new ValueTables(mapping.tables ?? {});
    this.scope = { tables: this.tables, names: this.names };
    const compiled = checkExpressions(mapping, () => this.scope);
    const slots = compiled.map((expression) => ({
      expression,
      field: expression.field.startsWith('fields.')
        ? expression.field.slice('fields.'.length)
        : undefined,
      boundRows: [] as number[],
    }));
    this.when = slots.find((slot) => slot.field === undefined);
    this.fields = slots.filter((slot) => slot.field !== undefined);
    this.computed = new Set(this.fields.map((slot) => slot.field!));
    this.usesUnique = slots.some((slot) => slot.expression.usesUnique);
  }

  /**
   * The outcome of the mapping for one row's input: at once when every expression stayed in the
   * synchronous evaluator (most records), else a promise (JSONata evaluates asynchronously).
   */
  evaluate(input: Record<string, unknown>, row: number): MappingOutcome | Promise<MappingOutcome> {
    const values: Record<string, unknown> = {};
    if (this.when !== undefined) {
      const answer = this.runSync(this.when, input, row);
      if (answer === GIVE_UP) return this.evaluateAsync(input, row);
      if (answer.failed !== undefined) {
        return { kind: 'failed', field: 'when', message: answer.failed };
      }
      if (!truthy(answer.value)) return this.skip();
    }
    for (const slot of this.fields) {
      const answer = this.runSync(slot, input, row);
      if (answer === GIVE_UP) return this.evaluateAsync(input, row, values);
      if (answer.failed !== undefined) {
        return { kind: 'failed', field: slot.field!, message: answer.failed };
      }
      if (answer.value !== undefined) values[slot.field!] = answer.value;
    }
    return { kind: 'values', values };
  }

  private skip(): MappingOutcome {
    return { kind: 'skip', reason: `skipped: "when" is false (${this.when!.expression.source})` };
  }

  /** The rest of a record's evaluation, from the first expression left to JSONata. */
  private async evaluateAsync(
    input: Record<string, unknown>,
    row: number,
    done?: Record<string, unknown>,
  ): Promise<MappingOutcome> {
    if (done === undefined && this.when !== undefined) {
      const answer = await this.run(this.when, input, row);
      if (answer.failed !== undefined) {
        return { kind: 'failed', field: 'when', message: answer.failed };
      }
      if (!truthy(answer.value)) return this.skip();
    }
    const values: Record<string, unknown> = { ...done };
    for (const slot of this.fields) {
      if (done !== undefined && Object.hasOwn(done, slot.field!)) continue;
      const answer = await this.run(slot, input, row);
      if (answer.failed !== undefined) {
        return { kind: 'failed', field: slot.field!, message: answer.failed };
      }
      if (answer.value !== undefined) values[slot.field!] = answer.value;
    }
    return { kind: 'values', values };
  }

  /** An expression's answer from the synchronous evaluator, or GIVE_UP. */
  private runSync(
    slot: Slot,
    input: Record<string, unknown>,
    row: number,
  ): { value?: unknown; failed?: string } | typeof GIVE_UP {
    if (slot.boundRows.length >= BOUND_FAILURES_BEFORE_GIVING_UP) {
      return { failed: givenUp(slot) };
    }
    let value: unknown;
    try {
      value = this.runFast(slot.expression, input, row);
    } catch (error) {
      return { failed: describe(error) };
    }
    if (value === GIVE_UP) return GIVE_UP;
    return plain(value);
  }

  private async run(
    slot: Slot,
    input: Record<string, unknown>,
    row: number,
  ): Promise<{ value?: unknown; failed?: string }> {
    const { expression } = slot;
    if (slot.boundRows.length >= BOUND_FAILURES_BEFORE_GIVING_UP) {
      return { failed: givenUp(slot) };
    }
    let value: unknown;
    try {
      value = this.runFast(expression, input, row);
      if (value === GIVE_UP) value = await expression.jsonata.evaluate(input, { row });
    } catch (error) {
      if (isBoundError(error)) slot.boundRows.push(row);
      return { failed: describe(error) };
    }
    return plain(value);
  }

  private runFast(
    expression: CompiledExpression,
    input: Record<string, unknown>,
    row: number,
  ): unknown {
    if (expression.fast === undefined) return GIVE_UP;
    try {
      return expression.fast({ row: input, rowNumber: row, scope: this.scope });
    } catch (error) {
      if (error === GIVE_UP) return GIVE_UP;
      throw error;
    }
  }
}

function givenUp(slot: Slot): string {
  return `not evaluated: the expression went past its bounds on rows ${slot.boundRows.join(', ')}`;
}

function isBoundError(error: unknown): boolean {
  if (error instanceof MappingFunctionError)
    return /built a (text|list) of more than/.test(error.message);
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && BOUND_CODES.has(code);
}

function describe(error: unknown): string {
  if (error instanceof MappingFunctionError) return error.message;
  const failure = error as { message?: unknown; position?: unknown; code?: unknown } | undefined;
  const message = typeof failure?.message === 'string' ? failure.message : String(error);
  const position = typeof failure?.position === 'number' ? ` (position ${failure.position})` : '';
  return `${message}${position}`;
}

/** The value as plain JSON (JSONata's sequences and prototype-less objects made ordinary). */
function plain(value: unknown): { value?: unknown; failed?: string } {
  if (value === undefined || value === null) return { value };
  const type = typeof value;
  if (type === 'string') {
    return (value as string).length > EXPRESSION_MAX_VALUE
      ? { failed: `the expression built a text of more than ${EXPRESSION_MAX_VALUE} characters` }
      : { value };
  }
  if (type === 'number' || type === 'boolean') return { value };
  if (type === 'function') return { failed: 'the expression gives a function, not a value' };
  const text = JSON.stringify(value);
  if (text === undefined) return { value: undefined };
  if (text.length > EXPRESSION_MAX_VALUE) {
    return {
      failed: `the expression built a value of more than ${EXPRESSION_MAX_VALUE} characters`,
    };
  }
  return { value: JSON.parse(text) as unknown };
}

/** JSONata's truth of a value. */
function truthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.some(truthy);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return false;
}
