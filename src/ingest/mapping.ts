/**
 * Mapping files: how the columns of an upload become fields when their names differ from the
 * field names, and fields computed by JSONata expressions over the row (docs/mapping.md).
 * Loaded and checked once, expressions compiled, before anything is stored; every problem is a
 * PORTER_MAPPING_INVALID naming it.
 *
 * ```json
 * { "columns": { "Login": "username", "Team": "groups" },
 *   "ignore": ["Notes"],
 *   "defaults": { "type": "General User" },
 *   "fields": { "status": "`Employment Status` = 'Terminated' ? 'Locked' : 'Active'" },
 *   "tables": { "departments": { "values": { "MKT-04": ["Marketing", "Staff"] } } },
 *   "when": "`Worker Type` != 'Contractor'",
 *   "listSeparator": ",", "delimiter": ";" }
 * ```
 */
import { z } from 'zod';
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { checkExpressions } from '../mapping/check-expressions.js';
import type { MappingTable } from '../mapping/tables.js';

export type { MappingTable } from '../mapping/tables.js';

export interface Mapping {
  /** Column name (matched case-insensitively) → field name. */
  columns: Record<string, string>;
  /** Columns (matched case-insensitively) to skip. */
  ignore: string[];
  /** Field → value given to every record that does not carry the field. */
  defaults: Record<string, unknown>;
  /** Separator of lists in one cell, when the import's options do not set one. */
  listSeparator?: string;
  /** CSV delimiter (',', ';', '\t' or '|'), when the import's options do not set one. */
  delimiter?: string;
  /** Field → JSONata expression over the row computing it. Default: none. */
  fields?: Record<string, string>;
  /** Value tables for `$table(name, key)`, values inline. Default: none. */
  tables?: Record<string, MappingTable>;
  /** A JSONata condition: a row for which it is false is skipped. Default: every row is read. */
  when?: string;
}

const tableValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.union([z.string(), z.number()])),
]);

const tableSchema = z.strictObject({
  /** Key → value (or list of values). */
  values: z.record(z.string(), tableValue).optional(),
  /** A CSV or JSON file beside the mapping file holding the values (read by readMappingFile). */
  file: z.string().optional(),
  default: tableValue.optional(),
});

const mappingSchema = z.strictObject({
  description: z.string().optional(),
  columns: z.record(z.string(), z.string()).optional(),
  ignore: z.array(z.string()).optional(),
  defaults: z.record(z.string(), z.unknown()).optional(),
  listSeparator: z.string().min(1).max(3).optional(),
  // the delimiters of src/ingest/options.ts (which imports this file)
  delimiter: z.enum([',', ';', '\t', '|', 'tab']).optional(),
  fields: z.record(z.string(), z.string()).optional(),
  tables: z.record(z.string(), tableSchema).optional(),
  when: z.string().optional(),
});

/** Whether the mapping computes anything (fields or a `when`), so records go through expressions. */
export function hasExpressions(mapping: Mapping | undefined): boolean {
  return (
    mapping !== undefined &&
    (Object.keys(mapping.fields ?? {}).length > 0 || mapping.when !== undefined)
  );
}

function invalid(problem: string): PorterError {
  return new PorterError('PORTER_MAPPING_INVALID', `Mapping file: ${problem}`, {
    details: { problem },
  });
}

/** Column names are compared trimmed and case-insensitively, as in headers. */
export function columnKey(column: string): string {
  return column.trim().toLowerCase();
}

/**
 * Reads a parsed mapping file (`columns`, `ignore`, `defaults`, `listSeparator`, `delimiter`,
 * all optional, plus a free `description`). With `resource`, field names are checked too (see {@link checkMappingFields}).
 */
export function loadMapping(json: unknown, resource?: ResourceName): Mapping {
  const parsed = mappingSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length === 0 ? 'top level' : issue.path.map(String).join('.');
    throw invalid(`${where}: ${issue.message}`);
  }
  const mapping: Mapping = {
    columns: parsed.data.columns ?? {},
    ignore: parsed.data.ignore ?? [],
    defaults: parsed.data.defaults ?? {},
  };
  if (parsed.data.listSeparator !== undefined) mapping.listSeparator = parsed.data.listSeparator;
  if (parsed.data.delimiter !== undefined) {
    mapping.delimiter = parsed.data.delimiter === 'tab' ? '\t' : parsed.data.delimiter;
  }
  if (parsed.data.fields !== undefined) mapping.fields = parsed.data.fields;
  if (parsed.data.when !== undefined) mapping.when = parsed.data.when;
  if (parsed.data.tables !== undefined) {
    mapping.tables = {};
    for (const [name, table] of Object.entries(parsed.data.tables)) {
      if (table.file !== undefined) {
        throw invalid(
          `table "${name}": its file "${table.file}" is read only when the mapping is read from ` +
            'a file (porter --map); here, give its "values" inline.',
        );
      }
      if (table.values === undefined) throw invalid(`table "${name}": give its "values".`);
      mapping.tables[name] = {
        values: table.values,
        ...(Object.hasOwn(table, 'default') ? { default: table.default } : {}),
      };
    }
  }
  checkColumns(mapping);
  checkExpressions(mapping);
  if (resource !== undefined) checkMappingFields(mapping, resource);
  return mapping;
}

function checkColumns(mapping: Mapping): void {
  const seen = new Map<string, string>();
  for (const column of [...Object.keys(mapping.columns), ...mapping.ignore]) {
    if (column.trim() === '') throw invalid('a column name is empty.');
    const key = columnKey(column);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw invalid(
        `column "${column}" is listed twice (also as "${earlier}") in "columns"/"ignore"; keep one.`,
      );
    }
    seen.set(key, column);
  }
  const byField = new Map<string, string>();
  for (const [column, field] of Object.entries(mapping.columns)) {
    const other = byField.get(field);
    if (other !== undefined) {
      throw invalid(`columns "${other}" and "${column}" both map to field "${field}"; keep one.`);
    }
    byField.set(field, column);
  }
  for (const field of Object.keys(mapping.fields ?? {})) {
    const column = byField.get(field);
    if (column !== undefined) {
      throw invalid(
        `field "${field}" is both computed in "fields" and filled by column "${column}"; keep one.`,
      );
    }
  }
}

function unknownField(field: string, resource: ResourceName): string {
  const fields = Object.keys(RESOURCES[resource].fields);
  const near = fields.find((name) => name.toLowerCase() === field.toLowerCase());
  const hint =
    near === undefined ? `fields of ${resource}: ${fields.join(', ')}` : `did you mean "${near}"?`;
  return `"${field}" is not a field of ${resource} (${hint}).`;
}

/**
 * Checks that mapping targets and defaults name real fields of the resource, and that no
 * default sets an id, the natural key or a field the service supplies.
 */
export function checkMappingFields(mapping: Mapping, resource: ResourceName): void {
  const descriptor = RESOURCES[resource];
  const fields = descriptor.fields;
  for (const [column, field] of Object.entries(mapping.columns)) {
    if (!Object.hasOwn(fields, field))
      throw invalid(`column "${column}" maps to ${unknownField(field, resource)}`);
  }
  for (const field of Object.keys(mapping.fields ?? {})) {
    if (!Object.hasOwn(fields, field)) throw invalid(`fields: ${unknownField(field, resource)}`);
    if (field === descriptor.idField || descriptor.serviceFields.includes(field)) {
      throw invalid(`fields: "${field}" is given by the server and cannot be computed; remove it.`);
    }
  }
  for (const field of Object.keys(mapping.defaults)) {
    if (!Object.hasOwn(fields, field))
      throw invalid(`default for ${unknownField(field, resource)}`);
    if (field === descriptor.idField || field === descriptor.keyField) {
      throw invalid(
        `a default for "${field}" would give every record the same ${field}; remove it.`,
      );
    }
    if (descriptor.serviceFields.includes(field)) {
      throw invalid(`"${field}" is supplied by the service and cannot have a default; remove it.`);
    }
  }
}
