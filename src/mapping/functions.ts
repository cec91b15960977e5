/**
 * The functions porter adds to JSONata for directory work. Each takes the evaluation's scope
 * (tables, names taken, the row) and its arguments; a refusal throws MappingFunctionError, which
 * fails the record with the message.
 */
import { formatDate, parseDate } from './dates.js';
import { normalizeDiacritics } from './diacritics.js';
import { MappingFunctionError } from './function-error.js';
import type { ValueTables } from './tables.js';
import type { UniqueNames } from './unique-names.js';

export interface FunctionScope {
  tables: ValueTables;
  names: UniqueNames;
}

export type PorterFunction = (scope: FunctionScope, row: number, args: unknown[]) => unknown;

function text(name: string, value: unknown, what: string): string {
  if (typeof value !== 'string') {
    throw new MappingFunctionError(`$${name}: the ${what} must be text`);
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value of a multi-valued attribute (SCIM's emails, phoneNumbers, …: objects with `value`,
 * `type`, `primary`): the first item marked primary, else the first of `type`, else the first;
 * only items whose value is text count. One item may be given as it is.
 */
function primaryValue(items: unknown, type: unknown): string | undefined {
  if (items === undefined) return undefined;
  const list = Array.isArray(items) ? (items as unknown[]) : [items];
  if (!list.every(isObject)) {
    throw new MappingFunctionError('$primaryValue: the items must be objects with a value');
  }
  const wanted = type === undefined ? undefined : text('primaryValue', type, 'type');
  const valued = list.filter((item) => typeof item.value === 'string');
  const chosen =
    valued.find((item) => item.primary === true) ??
    (wanted === undefined ? undefined : valued.find((item) => item.type === wanted)) ??
    valued[0];
  return chosen?.value as string | undefined;
}

export const PORTER_FUNCTIONS: Readonly<Record<string, PorterFunction>> = {
  primaryValue: (_scope, _row, [items, type]) => primaryValue(items, type),
  normalizeDiacritics: (_scope, _row, [value]) =>
    value === undefined
      ? undefined
      : normalizeDiacritics(text('normalizeDiacritics', value, 'argument')),
  table: (scope, _row, args) =>
    scope.tables.lookup(text('table', args[0], 'table name'), args[1], args[2], args.length >= 3),
  unique: (scope, row, [candidates, match]) => scope.names.pick(candidates, row, match),
  parseDate: (_scope, _row, [value, format]) =>
    value === undefined
      ? undefined
      : parseDate(text('parseDate', value, 'date'), text('parseDate', format, 'format')),
  formatDate: (_scope, _row, [value, format, inputFormat]) =>
    value === undefined
      ? undefined
      : formatDate(
          text('formatDate', value, 'date'),
          text('formatDate', format, 'format'),
          inputFormat === undefined ? undefined : text('formatDate', inputFormat, 'input format'),
        ),
};
