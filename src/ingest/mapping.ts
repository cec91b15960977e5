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
import {
  DEFAULT_ANCHOR_KEY,
  JOIN_RULES,
  type AnchorSettings,
  type JoinRule,
} from '../anchor/anchor-settings.js';

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
  /**
   * JSONata expression giving each record the source's own immutable id (docs/mapping.md#anchors).
   * Default: none (records are matched by username or group name).
   */
  anchor?: string;
  /** The substitutionMap key (users) or description tag (groups) holding the anchor. @defaultValue 'porterAnchor' */
  anchorKey?: string;
  /** How a DAM record without an anchor yet is joined, once. @defaultValue 'username' */
  join?: JoinRule;
  /** Create a user the row says is not Active (else the row is skipped). @defaultValue false */
  createInactive?: boolean;
}

/** The mapping's anchor settings with their defaults, or undefined when it has no anchor. */
export function anchorSettings(mapping: Mapping | undefined): AnchorSettings | undefined {
  if (mapping?.anchor === undefined) return undefined;
  return {
    expression: mapping.anchor,
    key: mapping.anchorKey ?? DEFAULT_ANCHOR_KEY,
    join: mapping.join ?? 'username',
    createInactive: mapping.createInactive ?? false,
  };
}

/**
 * An object of name → value whose names are data, whatever they are: `__proto__` and
 * `constructor` are names like any other (z.record would drop `__proto__` by assigning it). The
 * result has no prototype, so no name reads or writes anything but its own entry.
 */
function keyedRecord<T extends z.ZodType>(value: T): z.ZodType<Record<string, z.output<T>>> {
  return z.unknown().transform((input, context) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      context.addIssue({ code: 'custom', message: 'expected an object of name → value' });
      return z.NEVER;
    }
    const out = Object.create(null) as Record<string, z.output<T>>;
    for (const name of Object.keys(input)) {
      const parsed = value.safeParse((input as Record<string, unknown>)[name]);
      if (!parsed.success) {
        const [issue] = parsed.error.issues;
        context.addIssue({ code: 'custom', message: issue!.message, path: [name, ...issue!.path] });
        return z.NEVER;
      }
      out[name] = parsed.data;
    }
    return out;
  });
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
  values: keyedRecord(tableValue).optional(),
  /** A CSV or JSON file beside the mapping file holding the values (read by readMappingFile). */
  file: z.string().optional(),
  default: tableValue.optional(),
});

const mappingSchema = z.strictObject({
  description: z.string().optional(),
  columns: keyedRecord(z.string()).optional(),
  ignore: z.array(z.string()).optional(),
  defaults: keyedRecord(z.unknown()).optional(),
  listSeparator: z.string().min(1).max(3).optional(),
  // the delimiters of src/ingest/options.ts (which imports this file)
  delimiter: z.enum([',', ';', '\t', '|', 'tab']).optional(),
  fields: keyedRecord(z.string()).optional(),
  tables: keyedRecord(tableSchema).optional(),
  when: z.string().optional(),
  anchor: z.string().optional(),
  anchorKey: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'a name of letters, digits, "_", "." or "-"')
    .optional(),
  join: z.enum(JOIN_RULES as [JoinRule, ...JoinRule[]]).optional(),
  createInactive: z.boolean().optional(),
});

/** An empty object of names, without a prototype (see keyedRecord). */
function noEntries<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** Whether the mapping computes anything (fields or a `when`), so records go through expressions. */
export function hasExpressions(mapping: Mapping | undefined): boolean {
  return (
    mapping !== undefined &&
    (Object.keys(mapping.fields ?? {}).length > 0 ||
      mapping.when !== undefined ||
      mapping.anchor !== undefined)
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
    columns: parsed.data.columns ?? noEntries(),
    ignore: parsed.data.ignore ?? [],
    defaults: parsed.data.defaults ?? noEntries(),
  };
  if (parsed.data.listSeparator !== undefined) mapping.listSeparator = parsed.data.listSeparator;
  if (parsed.data.delimiter !== undefined) {
    mapping.delimiter = parsed.data.delimiter === 'tab' ? '\t' : parsed.data.delimiter;
  }
  if (parsed.data.fields !== undefined) mapping.fields = parsed.data.fields;
  if (parsed.data.when !== undefined) mapping.when = parsed.data.when;
  if (parsed.data.anchor !== undefined) mapping.anchor = parsed.data.anchor;
  if (parsed.data.anchorKey !== undefined) mapping.anchorKey = parsed.data.anchorKey;
  if (parsed.data.join !== undefined) mapping.join = parsed.data.join;
  if (parsed.data.createInactive !== undefined) {
    mapping.createInactive = parsed.data.createInactive;
  }
  const anchorOnly = ['anchorKey', 'join', 'createInactive'].filter(
    (name) => parsed.data[name as 'join'] !== undefined,
  );
  if (mapping.anchor === undefined && anchorOnly.length > 0) {
    throw invalid(`${anchorOnly.join(', ')}: give an "anchor" expression first.`);
  }
  if (parsed.data.tables !== undefined) {
    mapping.tables = noEntries();
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
