/**
 * Runs a mapping's expressions over one record at a time: `when` first, then each computed
 * field. Compiled once per import; records are evaluated one after the other, in upload order
 * (`$unique` depends on it). The synchronous evaluator (fast-path.ts) answers most records in
 * the calling thread; JSONata answers the rest in a thread of its own, stopped at a hard
 * deadline (expression-thread.ts). Each expression is bounded (compile.ts); one that goes past
 * its bounds on a few records is not run again for the rest of the upload, whose records fail
 * at once, so a pathological mapping costs a bounded time whatever the upload's size. Close the
 * evaluator when the upload is read.
 */
import type { Mapping } from '../ingest/mapping.js';
import { checkExpressions } from './check-expressions.js';
import { EXPRESSION_MAX_VALUE, type CompiledExpression } from './compile.js';
import { ExpressionBoundError, ExpressionThread } from './expression-thread.js';
import { GIVE_UP } from './fast-path.js';
import { MappingFunctionError } from './function-error.js';
import type { FunctionScope } from './functions.js';
import { ValueTables } from './tables.js';
import { UniqueNames } from './unique-names.js';
import { anchorText } from '../anchor/anchor-settings.js';

export type MappingOutcome =
  /** The computed fields (a field the expression gave nothing for is absent). */
  | { kind: 'values'; values: Record<string, unknown>; anchor?: string }
  | { kind: 'skip'; reason: string }
  /**
   * An expression failed: `values` holds what was computed before it and, when the mapping
   * computes the record's key, the key's value if its own expression could still give one (a
   * record that fails still names its key: a sync never takes it for one the file leaves out).
   */
  | {
      kind: 'failed';
      field: string;
      message: string;
      values: Record<string, unknown>;
      anchor?: string;
    };

/** Records an expression may go past its bounds on before it is given up for the upload. */
const BOUND_FAILURES_BEFORE_GIVING_UP = 3;
/** JSONata's codes for a time, depth or size bound reached. */
const BOUND_CODES = new Set(['D1011', 'D1012', 'D2014', 'D2015']);

interface Slot {
  expression: CompiledExpression;
  /** Its place in the expression thread. */
  index: number;
  /** The field it computes (undefined for `when` and the anchor). */
  field?: string;
  /** Whether it is the mapping's anchor. */
  anchor: boolean;
  /** Rows on which it went past its bounds. */
  boundRows: number[];
}

type Answer = { value?: unknown; failed?: string };

export class MappingEvaluator {
  readonly names = new UniqueNames();
  readonly tables: ValueTables;
  readonly usesUnique: boolean;
  /** The fields the mapping computes. */
  readonly computed: ReadonlySet<string>;
  private readonly scope: FunctionScope;
  /** `when` first when there is one, then the fields in order. */
  private readonly slots: Slot[];
  /** The slot computing the record's key, when the mapping computes it. */
  private readonly keySlot?: Slot;
  /** Where JSONata runs (started on the first record the synchronous evaluator hands over). */
  private readonly thread: ExpressionThread;

  /** `keyField`: the resource's key, whose value a failed record still gives when it can. */
  constructor(mapping: Mapping, keyField?: string) {
    this.tables = new ValueTables(mapping.tables ?? {});
    this.scope = { tables: this.tables, names: this.names };
    const compiled = checkExpressions(mapping, () => this.scope);
    this.slots = compiled.map((expression, index) => ({
      expression,
      index,
      field: expression.field.startsWith('fields.')
        ? expression.field.slice('fields.'.length)
        : undefined,
      anchor: expression.field === 'anchor',
      boundRows: [] as number[],
    }));
    const fields = this.slots.filter((slot) => slot.field !== undefined);
    this.computed = new Set(fields.map((slot) => slot.field!));
    this.keySlot = fields.find((slot) => keyField !== undefined && slot.field === keyField);
    this.usesUnique = this.slots.some((slot) => slot.expression.usesUnique);
    this.thread = new ExpressionThread(
      compiled.map((expression) => expression.source),
      () => this.scope,
    );
  }

  /**
   * The outcome of the mapping for one row's input: at once when every expression stayed in the
   * synchronous evaluator (most records), else a promise (JSONata runs in its own thread).
   */
  evaluate(input: Record<string, unknown>, row: number): MappingOutcome | Promise<MappingOutcome> {
    const values: Record<string, unknown> = {};
    this.names.rowAnchor = undefined;
    for (const slot of this.slots) {
      const answer = this.runSync(slot, input, row);
      if (answer === GIVE_UP) return this.evaluateAsync(input, row, slot.index, values);
      if (answer.failed !== undefined) return this.failed(slot, answer.failed, input, row, values);
      if (this.take(slot, answer.value, values) === 'skip') return this.skip();
    }
    return this.done(values);
  }

  /** Keeps a slot's answer: a field's value, the anchor, or `skip` for a false `when`. */
  private take(slot: Slot, value: unknown, values: Record<string, unknown>): 'skip' | undefined {
    if (slot.anchor) {
      this.names.rowAnchor = anchorText(value);
    } else if (slot.field === undefined) {
      if (!truthy(value)) return 'skip';
    } else if (value !== undefined) {
      values[slot.field] = value;
    }
    return undefined;
  }

  private done(values: Record<string, unknown>): MappingOutcome {
    const anchor = this.names.rowAnchor;
    return anchor === undefined ? { kind: 'values', values } : { kind: 'values', values, anchor };
  }

  /** Stops the expression thread, if one was started. Idempotent. */
  async close(): Promise<void> {
    await this.thread.close();
  }

  private skip(): MappingOutcome {
    return {
      kind: 'skip',
      reason: `skipped: "when" is false (${this.slots[0]!.expression.source})`,
    };
  }

  /** The rest of a record's evaluation, from the slot at `start` on. */
  private async evaluateAsync(
    input: Record<string, unknown>,
    row: number,
    start: number,
    values: Record<string, unknown>,
  ): Promise<MappingOutcome> {
    for (const slot of this.slots.slice(start)) {
      const answer = await this.run(slot, input, row);
      if (answer.failed !== undefined) return this.failed(slot, answer.failed, input, row, values);
      if (this.take(slot, answer.value, values) === 'skip') return this.skip();
    }
    return this.done(values);
  }

  /** A failed record, with its key computed when the mapping computes it and can. */
  private failed(
    slot: Slot,
    message: string,
    input: Record<string, unknown>,
    row: number,
    values: Record<string, unknown>,
  ): MappingOutcome | Promise<MappingOutcome> {
    const outcome: MappingOutcome = {
      kind: 'failed',
      field: slot.field ?? (slot.anchor ? 'anchor' : 'when'),
      message,
      values,
      ...(this.names.rowAnchor === undefined ? {} : { anchor: this.names.rowAnchor }),
    };
    const keySlot = this.keySlot;
    if (keySlot === undefined || keySlot === slot || Object.hasOwn(values, keySlot.field!)) {
      return outcome;
    }
    const keep = (answer: Answer): MappingOutcome => {
      if (answer.failed === undefined && answer.value !== undefined) {
        values[keySlot.field!] = answer.value;
      }
      return outcome;
    };
    const answer = this.runSync(keySlot, input, row);
    return answer === GIVE_UP ? this.run(keySlot, input, row).then(keep) : keep(answer);
  }

  /** An expression's answer from the synchronous evaluator, or GIVE_UP. */
  private runSync(
    slot: Slot,
    input: Record<string, unknown>,
    row: number,
  ): Answer | typeof GIVE_UP {
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

  /** An expression's answer, from JSONata in the expression thread when needed. */
  private async run(slot: Slot, input: Record<string, unknown>, row: number): Promise<Answer> {
    const answer = this.runSync(slot, input, row);
    if (answer !== GIVE_UP) return answer;
    try {
      const given = await this.thread.evaluate(slot.index, input, row);
      if ('failed' in given) return { failed: given.failed };
      return given.json === undefined ? {} : { value: JSON.parse(given.json) as unknown };
    } catch (error) {
      if (isBoundError(error)) slot.boundRows.push(row);
      return { failed: describe(error) };
    }
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
  if (error instanceof ExpressionBoundError) return true;
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
