/** How an import learns what the server holds: one bulk read, or one read per record. */

import type { ImportOptions, LookupInfo, LookupMode } from '../model/import.js';

export type { LookupInfo, LookupMode };

/**
 * An upload under this share of the directory is looked up record by record: reading a whole
 * directory of 100 × its size in bulk costs more than its own reads, wherever the server is.
 */
export const EACH_BELOW_SHARE = 0.01;

/**
 * The `auto` rule; `directorySize` is what the last snapshot of the target found, if any;
 * `lookalikes` says the import refuses keys that look like a server key: every server key is
 * read to compare anyway, so `auto` takes the snapshot that read gives.
 */
export function chooseLookup(
  requested: LookupMode,
  records: number,
  directorySize: number | undefined,
  lookalikes = false,
): Pick<LookupInfo, 'mode' | 'why'> {
  if (requested === 'snapshot') return { mode: 'snapshot', why: 'asked for' };
  if (requested === 'each') return { mode: 'each', why: 'asked for' };
  if (lookalikes) {
    return { mode: 'snapshot', why: 'new keys are compared with every key on the server' };
  }
  if (directorySize === undefined) {
    return { mode: 'snapshot', why: 'directory size not known yet' };
  }
  if (records < directorySize * EACH_BELOW_SHARE) {
    return {
      mode: 'each',
      why: `${records} records against a directory of ${directorySize}: under 1%`,
    };
  }
  return {
    mode: 'snapshot',
    why: `${records} records against a directory of ${directorySize}: 1% or more`,
  };
}

/**
 * Whether the import refuses keys that look like a key on the server: one it may create (a
 * user or group), unless look-alikes are allowed. Every key on the server is compared: by the
 * snapshot, or for an import read record by record by a scan of the keys alone.
 */
export function checksLookalikes(options: ImportOptions): boolean {
  return (
    options.resource !== 'acls' &&
    (options.mode === 'create' || options.mode === 'upsert' || options.mode === 'sync') &&
    options.allowLookalike !== true
  );
}
