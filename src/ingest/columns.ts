/**
 * Which field a column (CSV header cell, or JSON key) fills: the mapping's rename or ignore
 * first, then the field of the same name, compared trimmed and case-insensitively.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { showValue } from './coerce.js';
import { checkMappingFields, columnKey, hasExpressions, type Mapping } from './mapping.js';

export type ColumnTarget =
  | { kind: 'field'; field: string }
  /** Listed in the mapping's `ignore`. */
  | { kind: 'ignore' }
  /** A field the service supplies (groups' `acls`): accepted, never sent. */
  | { kind: 'service'; field: string }
  | { kind: 'unknown' };

/** Resolves column names to targets for one resource and mapping, remembering answers. */
export class ColumnResolver {
  private readonly byKey = new Map<string, ColumnTarget>();
  private readonly cache = new Map<string, ColumnTarget>();

  constructor(
    readonly resource: ResourceName,
    mapping?: Mapping,
  ) {
    const descriptor = RESOURCES[resource];
    const service = new Set(descriptor.serviceFields);
    const toTarget = (field: string): ColumnTarget =>
      service.has(field) ? { kind: 'service', field } : { kind: 'field', field };
    for (const field of Object.keys(descriptor.fields))
      this.byKey.set(columnKey(field), toTarget(field));
    if (mapping !== undefined) {
      checkMappingFields(mapping, resource);
      for (const [column, field] of Object.entries(mapping.columns)) {
        this.byKey.set(columnKey(column), toTarget(field));
      }
      for (const column of mapping.ignore) this.byKey.set(columnKey(column), { kind: 'ignore' });
      // a computed field comes from its expression: a column of its name only feeds expressions
      for (const field of Object.keys(mapping.fields ?? {})) {
        this.byKey.set(columnKey(field), { kind: 'ignore' });
      }
      this.unmatched = hasExpressions(mapping) ? { kind: 'ignore' } : { kind: 'unknown' };
    }
  }

  /** What a column matching nothing is: unknown, or (a mapping with expressions) input to them. */
  private readonly unmatched: ColumnTarget = { kind: 'unknown' };

  /** Target of one column name. */
  resolve(column: string): ColumnTarget {
    let target = this.cache.get(column);
    if (target === undefined) {
      const key = columnKey(column);
      // porter_* are the report's own columns: a failed report can be fixed and uploaded again
      target =
        this.byKey.get(key) ?? (key.startsWith('porter_') ? { kind: 'ignore' } : this.unmatched);
      // JSON keys are open-ended; bound the cache so a hostile file cannot grow it without end
      if (this.cache.size < 10_000) this.cache.set(column, target);
    }
    return target;
  }
}

/** Columns named in one message, at most; the rest are counted. */
export const MAX_NAMED_COLUMNS = 20;

/** A name cut to 80 characters, for details. */
function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function describe(column: string): string {
  return column.trim() === '' ? '(a column without a name)' : showValue(column);
}

/**
 * Resolves a CSV header: column → field for the columns that fill fields. Stops the import
 * (PORTER_INPUT_UNKNOWN_COLUMN / PORTER_INPUT_UNREADABLE) on unknown, unnamed or clashing columns.
 */
export function resolveHeader(
  columns: readonly string[],
  resolver: ColumnResolver,
): Record<string, string> {
  const seen = new Map<string, number>();
  columns.forEach((column, index) => {
    const earlier = seen.get(columnKey(column));
    if (earlier !== undefined && column.trim() !== '') {
      throw new PorterError(
        'PORTER_INPUT_UNREADABLE',
        `Column ${showValue(column)} appears twice in the header (columns ${earlier + 1} and ${index + 1}); remove or rename one.`,
        { details: { line: 1, column: shorten(column) } },
      );
    }
    seen.set(columnKey(column), index);
  });

  const unknown = columns.filter((column) => resolver.resolve(column).kind === 'unknown');
  if (unknown.length > 0) throw unknownColumnsError(unknown, resolver.resource);

  const fields: Record<string, string> = {};
  const byField = new Map<string, string>();
  for (const column of columns) {
    const target = resolver.resolve(column);
    if (target.kind !== 'field') continue;
    const other = byField.get(target.field);
    if (other !== undefined) {
      throw new PorterError(
        'PORTER_INPUT_UNREADABLE',
        `Columns ${showValue(other)} and ${showValue(column)} both fill field "${target.field}"; ignore one of them in a mapping file.`,
        { details: { line: 1, field: target.field, columns: [other, column] } },
      );
    }
    byField.set(target.field, column);
    fields[column] = target.field;
  }
  return fields;
}

/**
 * The error for columns that match no field, saying how to map or ignore them. It names the
 * first MAX_NAMED_COLUMNS columns (each shortened) and counts the rest, so a header of
 * thousands of columns gives a message of a few lines.
 */
export function unknownColumnsError(
  columns: readonly string[],
  resource: ResourceName,
): PorterError {
  const named = columns.slice(0, MAX_NAMED_COLUMNS);
  const more = columns.length - named.length;
  const names = named.map(describe).join(', ') + (more > 0 ? ` and ${more} more` : '');
  const example = named.find((column) => column.trim() !== '') ?? 'Column';
  const shownExample = showValue(example);
  const plural = columns.length > 1;
  return new PorterError(
    'PORTER_INPUT_UNKNOWN_COLUMN',
    `${plural ? 'Columns' : 'Column'} ${names} ${plural ? 'match' : 'matches'} no field of ${resource}. ` +
      `Rename ${plural ? 'them' : 'it'} to a field name, map ${plural ? 'them' : 'it'} in a mapping file ` +
      `({"columns": {${shownExample}: "<field>"}}) or skip ${plural ? 'them' : 'it'} ` +
      `({"ignore": [${shownExample}]}). Fields of ${resource}: ${Object.keys(RESOURCES[resource].fields).join(', ')}.`,
    { details: { columns: named.map(shorten), count: columns.length } },
  );
}
