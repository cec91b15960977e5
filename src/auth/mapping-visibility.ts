/**
 * What a mapping brought in is shown to those who may bring it in. A mapping's table values
 * were read from files on the host that submitted it (or given inline), and travel with every
 * import and schedule that uses it; its expressions, columns and defaults explain a report and
 * are shown with it, but its tables' values only to the roles that may start an import with a
 * mapping (operator and above). Others see each table's name and how many keys it holds.
 */
import type { ImportOptions } from '../model/import.js';
import { currentPrincipal } from './acting.js';
import type { Principal } from './principal.js';
import { roleIncludes, type Role } from './roles.js';

/** The least role that reads a mapping's table values. */
export const MAPPING_TABLES_ROLE: Role = 'operator';

/** What a table shows to a role that may not read its values. */
export interface WithheldTable {
  /** How many keys the table holds. */
  keys: number;
  withheld: string;
}

/** Whether `principal` reads table values (no principal: porter's own work, or the CLI). */
export function readsMappingTables(principal: Principal | undefined = currentPrincipal()): boolean {
  return principal === undefined || roleIncludes(principal.role, MAPPING_TABLES_ROLE);
}

/**
 * The options as `principal` may read them: the same object when it reads table values or the
 * options carry no tables, else a copy whose tables show their key counts only.
 */
export function visibleOptions<T extends Pick<ImportOptions, 'mapping'>>(
  options: T,
  principal: Principal | undefined = currentPrincipal(),
): T {
  const tables = options.mapping?.tables;
  if (tables === undefined || readsMappingTables(principal)) return options;
  const withheld: Record<string, WithheldTable> = Object.create(null) as Record<
    string,
    WithheldTable
  >;
  for (const [name, table] of Object.entries(tables)) {
    withheld[name] = {
      keys: Object.keys(table.values ?? {}).length,
      withheld: `the table's values are shown to the ${MAPPING_TABLES_ROLE} role and above`,
    };
  }
  return {
    ...options,
    mapping: { ...options.mapping!, tables: withheld as unknown as typeof tables },
  };
}
