/** The check of a mapping's expressions when it is loaded: each compiles, and names real tables. */
import type { ExprNode } from 'jsonata';
import { PorterError } from '../errors/porter-error.js';
import { compileExpression, type CompiledExpression } from './compile.js';
import type { FunctionScope } from './functions.js';
import { ValueTables, type MappingTable } from './tables.js';
import { UniqueNames } from './unique-names.js';

/** The part of a mapping file (src/ingest/mapping.ts) that computes: its fields, tables and `when`. */
export interface MappingExpressions {
  fields?: Record<string, string>;
  tables?: Record<string, MappingTable>;
  when?: string;
  anchor?: string;
}

/**
 * The mapping's expressions in evaluation order: `when` first, then the anchor (a field's
 * `$unique` reads it), then the fields.
 */
export function expressionsOf(mapping: MappingExpressions): Array<[string, string]> {
  return [
    ...(mapping.when === undefined ? [] : [['when', mapping.when] as [string, string]]),
    ...(mapping.anchor === undefined ? [] : [['anchor', mapping.anchor] as [string, string]]),
    ...Object.entries(mapping.fields ?? {}).map(
      ([field, source]) => [`fields.${field}`, source] as [string, string],
    ),
  ];
}

/** Compiles every expression (PORTER_MAPPING_INVALID on the first that cannot run). */
export function checkExpressions(
  mapping: MappingExpressions,
  scope?: () => FunctionScope,
): CompiledExpression[] {
  const own = { tables: new ValueTables(mapping.tables ?? {}), names: new UniqueNames() };
  return expressionsOf(mapping).map(([where, source]) => {
    const compiled = compileExpression(where, source, scope ?? (() => own));
    checkTableNames(compiled.jsonata.ast(), where, source, mapping);
    return compiled;
  });
}

function checkTableNames(
  node: unknown,
  where: string,
  source: string,
  mapping: MappingExpressions,
): void {
  if (Array.isArray(node)) {
    for (const item of node) checkTableNames(item, where, source, mapping);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const expr = node as ExprNode;
  const first = expr.arguments?.[0];
  if (
    expr.type === 'function' &&
    expr.procedure?.type === 'variable' &&
    expr.procedure.value === 'table' &&
    first?.type === 'string' &&
    !Object.hasOwn(mapping.tables ?? {}, String(first.value))
  ) {
    const known = Object.keys(mapping.tables ?? {});
    throw new PorterError(
      'PORTER_MAPPING_INVALID',
      `Mapping file: ${where}: there is no table "${String(first.value)}" (tables: ${known.length > 0 ? known.join(', ') : 'none'}) in ${JSON.stringify(source)}`,
      { details: { field: where, value: source, position: first.position } },
    );
  }
  for (const value of Object.values(node)) {
    if (typeof value === 'object' && value !== null) checkTableNames(value, where, source, mapping);
  }
}
