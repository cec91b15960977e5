/**
 * Compiles one mapping expression, once per import: JSONata parses it (a syntax error is
 * PORTER_MAPPING_INVALID with the field, the expression and the position), porter's functions
 * are registered on it, and the parts it must not use are refused before anything runs.
 */
import jsonata from 'jsonata';
import type { ExprNode, Expression } from 'jsonata';
import { PorterError } from '../errors/porter-error.js';
import { compileFast, type FastExpression } from './fast-path.js';
import { MappingFunctionError } from './function-error.js';
import { KNOWN_FUNCTIONS, nearestFunction } from './function-names.js';
import { exponentialRisk } from '../util/regex-risk.js';
import { PORTER_FUNCTIONS, type FunctionScope } from './functions.js';

/** Longest an expression may run for one record. */
export const EXPRESSION_TIMEOUT_MS = 500;
/** Deepest an expression may nest calls (recursion). */
export const EXPRESSION_MAX_DEPTH = 300;
/** Longest sequence an expression may build. */
export const EXPRESSION_MAX_SEQUENCE = 100_000;
/** Longest text, or list, any step of an expression may produce. */
export const EXPRESSION_MAX_VALUE = 64 * 1024;

/** Longest regular expression an expression may hold. */
export const MAX_PATTERN_CHARS = 200;

/** Names no expression may read: they lead to prototypes, not to the row. */
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);
/** JSONata functions taken away: `$eval` would run text no check has seen. */
export const REMOVED_FUNCTIONS: ReadonlySet<string> = new Set(['eval']);

export interface CompiledExpression {
  /** Where it stands in the mapping: a field name, or `when`. */
  field: string;
  source: string;
  jsonata: Expression;
  /** The synchronous form, when the expression stays within it (see fast-path.ts). */
  fast?: FastExpression;
  /** Whether it calls `$unique` (the directory is then read before the upload). */
  usesUnique: boolean;
}

/** Bound on the size of every value a step produces: huge text fails early, not at the end. */
function checkSize(_expr: unknown, _input: unknown, _environment: unknown, result: unknown): void {
  if (typeof result === 'string' && result.length > EXPRESSION_MAX_VALUE) {
    throw new MappingFunctionError(
      `the expression built a text of more than ${EXPRESSION_MAX_VALUE} characters`,
    );
  }
  if (Array.isArray(result) && result.length > EXPRESSION_MAX_SEQUENCE) {
    throw new MappingFunctionError(
      `the expression built a list of more than ${EXPRESSION_MAX_SEQUENCE} items`,
    );
  }
}

function invalid(field: string, source: string, problem: string, position?: number): PorterError {
  const where = position === undefined ? '' : ` at position ${position}`;
  return new PorterError(
    'PORTER_MAPPING_INVALID',
    `Mapping file: ${field}: ${problem}${where} in ${JSON.stringify(source)}`,
    { details: { field, value: source, problem, ...(position === undefined ? {} : { position }) } },
  );
}

interface Usage {
  unique: boolean;
  /** Names the expression binds itself (`$f := …`, a function's parameters). */
  bound: Set<string>;
  /** Calls of a name by `$name(…)`, checked once every binding is known. */
  calls: Array<{ name: string; position?: number }>;
}

/** Refuses prototype names and removed functions anywhere in the tree; notes `$unique`. */
function inspect(node: unknown, field: string, source: string, usage: Usage): void {
  if (Array.isArray(node)) {
    for (const item of node) inspect(item, field, source, usage);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const expr = node as ExprNode;
  if (expr.type === 'name' && FORBIDDEN_NAMES.has(String(expr.value))) {
    throw invalid(field, source, `"${String(expr.value)}" cannot be read`, expr.position);
  }
  if (expr.type === 'variable' && REMOVED_FUNCTIONS.has(String(expr.value))) {
    throw invalid(field, source, `$${String(expr.value)} is not available`, expr.position);
  }
  if (expr.type === 'variable' && expr.value === 'unique') usage.unique = true;
  // a regular expression literal (the typings call its type `regexp`; JSONata says `regex`)
  if ((expr.type as string) === 'regex' && expr.value instanceof RegExp) {
    const pattern = expr.value.source;
    if (pattern.length > MAX_PATTERN_CHARS) {
      throw invalid(
        field,
        source,
        `a regular expression is longer than ${MAX_PATTERN_CHARS} characters`,
        expr.position,
      );
    }
    const risk = exponentialRisk(pattern);
    if (risk !== undefined) throw invalid(field, source, `/${pattern}/: ${risk}`, expr.position);
  }
  // the typings know neither `bind` (`$f := …`) nor its `lhs` as one node
  const record = node as { type?: unknown; lhs?: { type?: unknown; value?: unknown } };
  if (record.type === 'bind' && record.lhs?.type === 'variable') {
    usage.bound.add(String(record.lhs.value));
  }
  if (expr.type === 'lambda') {
    for (const parameter of expr.arguments ?? []) usage.bound.add(String(parameter.value));
  }
  if (
    (expr.type === 'function' || expr.type === 'partial') &&
    expr.procedure?.type === 'variable' &&
    expr.procedure.value !== ''
  ) {
    usage.calls.push({ name: String(expr.procedure.value), position: expr.procedure.position });
  }
  for (const value of Object.values(node)) {
    if (typeof value === 'object' && value !== null) inspect(value, field, source, usage);
  }
}

/** Compiles `source` (the expression of `field`); throws PORTER_MAPPING_INVALID when it cannot run. */
export function compileExpression(
  field: string,
  source: string,
  scope: () => FunctionScope,
): CompiledExpression {
  if (source.trim() === '') throw invalid(field, source, 'the expression is empty');
  let expression: Expression;
  try {
    expression = jsonata(source, {
      timeout: EXPRESSION_TIMEOUT_MS,
      stack: EXPRESSION_MAX_DEPTH,
      sequence: EXPRESSION_MAX_SEQUENCE,
    });
  } catch (error) {
    const failure = error as { message?: string; position?: number };
    throw invalid(
      field,
      source,
      `syntax error: ${failure.message ?? String(error)}`,
      failure.position,
    );
  }
  const usage: Usage = { unique: false, bound: new Set(), calls: [] };
  const ast = expression.ast();
  inspect(ast, field, source, usage);
  for (const call of usage.calls) {
    if (KNOWN_FUNCTIONS.has(call.name) || usage.bound.has(call.name)) continue;
    const nearest = nearestFunction(call.name);
    const hint = nearest === undefined ? '' : ` (did you mean $${nearest}?)`;
    throw invalid(field, source, `there is no function $${call.name}${hint}`, call.position);
  }
  for (const name of REMOVED_FUNCTIONS) {
    expression.assign(name, undefined);
  }
  for (const [name, implementation] of Object.entries(PORTER_FUNCTIONS)) {
    expression.registerFunction(
      name,
      function (this: { environment: { lookup(name: string): unknown } }, ...args: unknown[]) {
        const row = this.environment.lookup('row');
        return implementation(scope(), typeof row === 'number' ? row : 0, args);
      },
    );
  }
  expression.assign(Symbol.for('jsonata.__evaluate_exit') as unknown as string, checkSize);
  return { field, source, jsonata: expression, fast: compileFast(ast), usesUnique: usage.unique };
}
