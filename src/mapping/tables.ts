/**
 * Value tables of a mapping: an HR code → one value or a list of values (one department code →
 * several groups). Keys are matched trimmed and case-insensitively; a key the table does not
 * hold fails its record unless the table, or the call, gives a default.
 */
import { MappingFunctionError } from './function-error.js';

/** A table as the mapping file holds it once loaded (values inline). */
export interface MappingTable {
  values: Record<string, unknown>;
  /** The value of a key the table does not hold; without it such a key fails its record. */
  default?: unknown;
}

export class ValueTables {
  private readonly tables = new Map<
    string,
    { values: Map<string, unknown>; table: MappingTable }
  >();

  constructor(tables: Readonly<Record<string, MappingTable>>) {
    for (const [name, table] of Object.entries(tables)) {
      const values = new Map<string, unknown>();
      for (const [key, value] of Object.entries(table.values)) values.set(tableKey(key), value);
      this.tables.set(name, { values, table });
    }
  }

  /** The value of `key` in table `name` (see the module comment); nothing for no key. */
  lookup(name: string, key: unknown, fallback?: unknown, hasFallback = false): unknown {
    const found = this.tables.get(name);
    if (found === undefined) {
      throw new MappingFunctionError(`there is no table "${name}" in the mapping`);
    }
    if (key === undefined || key === null) return undefined;
    if (typeof key !== 'string' && typeof key !== 'number') {
      throw new MappingFunctionError(`table "${name}": a key is text or a number`);
    }
    const value = found.values.get(tableKey(String(key)));
    if (value !== undefined) return copy(value);
    if (hasFallback) return fallback;
    if (Object.hasOwn(found.table, 'default')) return copy(found.table.default);
    throw new MappingFunctionError(
      `table "${name}" has no key "${String(key)}" and no default; add the key or a default`,
    );
  }
}

export function tableKey(key: string): string {
  return key.trim().toLowerCase();
}

function copy(value: unknown): unknown {
  return Array.isArray(value) ? [...(value as unknown[])] : value;
}
