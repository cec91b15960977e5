/**
 * A synchronous evaluator for the part of JSONata most mappings use: column reads and fields of
 * nested objects, literals, comparisons, `&`, `and`/`or`, `? :`, `in`, array constructors and
 * the common string functions, plus porter's own. JSONata's evaluator is asynchronous at every step, which costs more than
 * the rest of ingest; this one costs a few function calls.
 *
 * It computes exactly what JSONata would, or gives up: a node it does not know makes the whole
 * expression JSONata's (decided once, at compile time), and a value it does not handle exactly
 * (a number to concatenate, an array where text is expected) throws GIVE_UP, and that record's
 * expression is evaluated by JSONata instead. It has no loops, so it needs no time limit.
 */
import type { ExprNode } from 'jsonata';
import { PORTER_FUNCTIONS, type FunctionScope } from './functions.js';

export interface FastInput {
  row: Record<string, unknown>;
  rowNumber: number;
  scope: FunctionScope;
}

export type FastExpression = (input: FastInput) => unknown;

/** Thrown when a value is outside what this evaluator handles exactly. */
export const GIVE_UP: unique symbol = Symbol('give up');

function giveUp(): never {
  throw GIVE_UP;
}

type Scalar = string | number | boolean | null | undefined;

function scalar(value: unknown): Scalar {
  if (value === undefined || value === null) return value;
  const type = typeof value;
  if (type === 'string' || type === 'boolean') return value as Scalar;
  if (type === 'number' && Number.isFinite(value)) return value as number;
  return giveUp();
}

function text(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  return giveUp();
}

function requiredText(value: unknown): string {
  if (typeof value === 'string') return value;
  return giveUp();
}

/** JSONata's $boolean for single values. */
function truthy(value: unknown): boolean {
  const single = scalar(value);
  if (typeof single === 'string') return single.length > 0;
  if (typeof single === 'number') return single !== 0;
  return single === true;
}

function codePoints(value: string): string[] {
  return Array.from(value);
}

type Builtin = (args: unknown[]) => unknown;

/**
 * A parameter's type in JSONata's signature of the function: text, number, boolean, a list of
 * texts (or one text), anything. JSONata checks every argument given (not undefined) against it
 * before the function runs, whatever the other arguments are, and raises T0410 (T0412 for a
 * list) on a mismatch: the synchronous evaluator gives such a record to JSONata.
 */
type Param = 's' | 'n' | 'b' | 'a<s>' | 'x';

function fits(param: Param, value: unknown): boolean {
  switch (param) {
    case 's':
      return typeof value === 'string';
    case 'n':
      return typeof value === 'number';
    case 'b':
      return typeof value === 'boolean';
    case 'a<s>':
      return (
        typeof value === 'string' ||
        (Array.isArray(value) && value.every((item) => typeof item === 'string'))
      );
    case 'x':
      return true;
  }
}

interface BuiltinFunction {
  arity: readonly number[];
  /** JSONata's signature of its parameters. */
  params: readonly Param[];
  call: Builtin;
}

const BUILTINS: Readonly<Record<string, BuiltinFunction>> = {
  lowercase: { arity: [1], params: ['s'], call: ([value]) => text(value)?.toLowerCase() },
  uppercase: { arity: [1], params: ['s'], call: ([value]) => text(value)?.toUpperCase() },
  trim: {
    arity: [1],
    params: ['s'],
    call: ([value]) => {
      const given = text(value);
      if (given === undefined) return undefined;
      let result = given.replace(/[ \t\n\r]+/gm, ' ');
      if (result.charAt(0) === ' ') result = result.substring(1);
      if (result.charAt(result.length - 1) === ' ') result = result.substring(0, result.length - 1);
      return result;
    },
  },
  substringBefore: {
    arity: [2],
    params: ['s', 's'],
    call: ([value, chars]) => {
      const given = text(value);
      if (given === undefined) return undefined;
      const at = given.indexOf(requiredText(chars));
      return at > -1 ? given.slice(0, at) : given;
    },
  },
  substringAfter: {
    arity: [2],
    params: ['s', 's'],
    call: ([value, chars]) => {
      const given = text(value);
      if (given === undefined) return undefined;
      const separator = requiredText(chars);
      const at = given.indexOf(separator);
      return at > -1 ? given.slice(at + separator.length) : given;
    },
  },
  substring: {
    arity: [2, 3],
    params: ['s', 'n', 'n'],
    call: ([value, start, length]) => {
      const given = text(value);
      if (given === undefined) return undefined;
      if (!Number.isInteger(start) || (length !== undefined && !Number.isInteger(length))) {
        return giveUp();
      }
      const chars = codePoints(given);
      let from = start as number;
      if (chars.length + from < 0) from = 0;
      if (length === undefined) return chars.slice(from).join('');
      const count = length as number;
      if (count <= 0) return '';
      const end = from >= 0 ? from + count : chars.length + from + count;
      return chars.slice(from, end).join('');
    },
  },
  length: {
    arity: [1],
    params: ['s'],
    call: ([value]) => {
      const given = text(value);
      return given === undefined ? undefined : codePoints(given).length;
    },
  },
  contains: {
    arity: [2],
    params: ['s', 's'],
    call: ([value, pattern]) => {
      const given = text(value);
      return given === undefined ? undefined : given.includes(requiredText(pattern));
    },
  },
  join: {
    arity: [1, 2],
    params: ['a<s>', 's'],
    call: ([values, separator]) => {
      if (values === undefined) return undefined;
      const list = typeof values === 'string' ? [values] : values;
      if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) giveUp();
      return (list as string[]).join(separator === undefined ? '' : requiredText(separator));
    },
  },
  string: {
    arity: [1],
    params: ['x'],
    call: ([value]) => (typeof value === 'string' || value === undefined ? value : giveUp()),
  },
  exists: { arity: [1], params: ['x'], call: ([value]) => value !== undefined },
  boolean: {
    arity: [1],
    params: ['x'],
    call: ([value]) => (value === undefined ? undefined : truthy(value)),
  },
  not: {
    arity: [1],
    params: ['x'],
    call: ([value]) => (value === undefined ? undefined : !truthy(value)),
  },
};

const PORTER_ARITY: Readonly<Record<string, readonly number[]>> = {
  normalizeDiacritics: [1],
  table: [2, 3],
  unique: [1, 2],
  parseDate: [2],
  formatDate: [2, 3],
  primaryValue: [1, 2],
};

/** Porter functions that take a list of objects as their first argument, as it is stored. */
const TAKES_OBJECTS: ReadonlySet<string> = new Set(['primaryValue']);

function equal(left: unknown, right: unknown): boolean {
  return scalar(left) === scalar(right);
}

const COMPARE: Readonly<
  Record<string, (left: string | number, right: string | number) => boolean>
> = {
  '<': (left, right) => left < right,
  '<=': (left, right) => left <= right,
  '>': (left, right) => left > right,
  '>=': (left, right) => left >= right,
};

const ARITHMETIC: Readonly<Record<string, (left: number, right: number) => number>> = {
  '+': (left, right) => left + right,
  '-': (left, right) => left - right,
  '*': (left, right) => left * right,
  '/': (left, right) => left / right,
  '%': (left, right) => left % right,
};

function hasExtras(node: ExprNode): boolean {
  const record = node as unknown as Record<string, unknown>;
  return (
    record.predicate !== undefined ||
    record.group !== undefined ||
    record.stages !== undefined ||
    record.keepArray !== undefined ||
    record.focus !== undefined ||
    record.index !== undefined ||
    record.tuple !== undefined
  );
}

/** The fast form of an expression, or undefined when it uses anything this evaluator lacks. */
export function compileFast(node: ExprNode): FastExpression | undefined {
  try {
    return build(node);
  } catch (error) {
    if (error === GIVE_UP) return undefined;
    throw error;
  }
}

function build(node: ExprNode): FastExpression {
  if (hasExtras(node)) return giveUp();
  switch (node.type as string) {
    case 'string':
    case 'number':
    case 'value': {
      const value: unknown = node.value;
      return () => value;
    }
    case 'path':
      return buildPath(node.steps ?? []);
    case 'variable':
      if (node.value === 'row') return ({ rowNumber }) => rowNumber;
      return giveUp();
    case 'block': {
      const expressions = node.expressions ?? [];
      if (expressions.length !== 1) return giveUp();
      return build(expressions[0]);
    }
    case 'condition':
      return buildCondition(node);
    case 'binary':
      return buildBinary(node);
    case 'unary':
      return buildUnary(node);
    case 'function':
      return buildCall(node);
    default:
      return giveUp();
  }
}

/**
 * A column, or a field inside objects (`name.givenName`, a SCIM extension's `` `urn:…`.department ``).
 * Only plain objects are walked: a list on the way (which JSONata maps over) or at the end gives
 * the record to JSONata, and so does text, a number or null where an object is expected.
 */
function buildPath(steps: ExprNode[], objects = false): FastExpression {
  if (steps.length === 0) return giveUp();
  // a list of objects, or one, read as it is stored (for a function that takes one)
  const read = objects ? storedObjects : scalar;
  const names = steps.map((step) => {
    if (step.type !== 'name' || hasExtras(step)) return giveUp();
    return String(step.value);
  });
  if (names.length === 1) {
    const [name] = names as [string];
    return ({ row }) => (Object.hasOwn(row, name) ? read(row[name]) : undefined);
  }
  return ({ row }) => {
    let value: unknown = row;
    for (const name of names) {
      if (value === undefined) return undefined;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return giveUp();
      value = Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
    }
    return read(value);
  };
}

function plainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object, a list of objects, or a single value: what JSONata would hand a function. */
function storedObjects(value: unknown): unknown {
  if (plainObject(value)) return value;
  if (Array.isArray(value)) return value.every(plainObject) ? value : giveUp();
  return scalar(value);
}

function buildCondition(node: ExprNode): FastExpression {
  const record = node as unknown as { condition: ExprNode; then: ExprNode; else?: ExprNode };
  const condition = build(record.condition);
  const then = build(record.then);
  const otherwise = record.else === undefined ? undefined : build(record.else);
  return (input) => {
    if (truthy(condition(input))) return then(input);
    return otherwise === undefined ? undefined : otherwise(input);
  };
}

function buildBinary(node: ExprNode): FastExpression {
  const operator = String(node.value);
  const left = build(node.lhs as ExprNode);
  const right = build(node.rhs as ExprNode);
  switch (operator) {
    case '&':
      return (input) => (text(left(input)) ?? '') + (text(right(input)) ?? '');
    case '=':
    case '!=': {
      const same = operator === '=';
      return (input) => {
        const a = left(input);
        const b = right(input);
        if (a === undefined || b === undefined) return false;
        return equal(a, b) === same;
      };
    }
    case 'and':
      return (input) => truthy(left(input)) && truthy(right(input));
    case 'or':
      return (input) => truthy(left(input)) || truthy(right(input));
    case 'in':
      return (input) => {
        const a = scalar(left(input));
        const b = right(input);
        if (a === undefined || b === undefined) return false;
        const list = Array.isArray(b) ? b : [b];
        return list.some((item) => equal(item, a));
      };
    default:
      break;
  }
  const compare = COMPARE[operator];
  if (compare !== undefined) {
    return (input) => {
      const a = scalar(left(input));
      const b = scalar(right(input));
      if (a === undefined || b === undefined) {
        // JSONata refuses booleans and null here even beside nothing
        if (a === null || b === null || typeof a === 'boolean' || typeof b === 'boolean') giveUp();
        return undefined;
      }
      if (typeof a !== typeof b || typeof a === 'boolean' || a === null || b === null) giveUp();
      return compare(a as string | number, b as string | number);
    };
  }
  const arithmetic = ARITHMETIC[operator];
  if (arithmetic !== undefined) {
    return (input) => {
      const a = scalar(left(input));
      const b = scalar(right(input));
      if (a === undefined || b === undefined) {
        if (
          (a !== undefined && typeof a !== 'number') ||
          (b !== undefined && typeof b !== 'number')
        ) {
          giveUp();
        }
        return undefined;
      }
      if (typeof a !== 'number' || typeof b !== 'number') return giveUp();
      const result = arithmetic(a, b);
      return Number.isFinite(result) ? result : giveUp();
    };
  }
  return giveUp();
}

function buildUnary(node: ExprNode): FastExpression {
  if (node.value === '[') {
    const items = (node.expressions ?? []).map((item) => ({
      nested: item.type === 'unary' && item.value === '[',
      evaluate: build(item),
    }));
    // JSONata evaluates a list's items at once: when two fail, which error it reports depends
    // on its scheduling, so a failing item of a longer list is left to JSONata to report
    const evaluate =
      items.length < 2
        ? (item: (typeof items)[number], input: FastInput): unknown => item.evaluate(input)
        : (item: (typeof items)[number], input: FastInput): unknown => {
            try {
              return item.evaluate(input);
            } catch {
              return giveUp();
            }
          };
    return (input) => {
      const result: unknown[] = [];
      for (const item of items) {
        const value = evaluate(item, input);
        if (value === undefined) continue;
        if (Array.isArray(value) && !item.nested) result.push(...(value as unknown[]));
        else result.push(value);
      }
      return result;
    };
  }
  if (node.value === '-') {
    const operand = build((node as unknown as { expression: ExprNode }).expression);
    return (input) => {
      const value = scalar(operand(input));
      if (value === undefined) return undefined;
      return typeof value === 'number' ? -value : giveUp();
    };
  }
  return giveUp();
}

function buildCall(node: ExprNode): FastExpression {
  const procedure = node.procedure;
  if (procedure?.type !== 'variable' || hasExtras(procedure)) return giveUp();
  const name = String(procedure.value);
  const args = (node.arguments ?? []).map(build);
  const builtin = BUILTINS[name];
  if (builtin !== undefined) {
    if (!builtin.arity.includes(args.length)) return giveUp();
    const { params } = builtin;
    return (input) => {
      const values = args.map((arg) => arg(input));
      for (let index = 0; index < values.length; index++) {
        const value = values[index];
        if (value !== undefined && !fits(params[index]!, value)) giveUp();
      }
      return builtin.call(values);
    };
  }
  const porter = PORTER_FUNCTIONS[name];
  const first = node.arguments?.[0];
  if (TAKES_OBJECTS.has(name) && first !== undefined && (first.type as string) === 'path') {
    if (!hasExtras(first)) args[0] = buildPath(first.steps ?? [], true);
  }
  if (porter !== undefined && PORTER_ARITY[name].includes(args.length)) {
    return (input) => {
      const values = args.map((arg) => arg(input));
      // JSONata hands a function a one-item list as it is, and drops nothing: the same here
      return porter(input.scope, input.rowNumber, values);
    };
  }
  return giveUp();
}
