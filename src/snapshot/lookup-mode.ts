/** How an import learns what the server holds: one bulk read, or one read per record. */

import type { LookupInfo, LookupMode } from '../model/import.js';

export type { LookupInfo, LookupMode };

/**
 * An upload under this share of the directory is looked up record by record: reading a whole
 * directory of 100 × its size in bulk costs more than its own reads, wherever the server is.
 */
export const EACH_BELOW_SHARE = 0.01;

/**
 * The `auto` rule; `directorySize` is what the last snapshot of the target found, if any;
 * `lookalikes` says the import refuses keys that look like a server key, which only a snapshot
 * can compare.
 */
export function chooseLookup(
  requested: LookupMode,
  records: number,
  directorySize: number | undefined,
  lookalikes = false,
): Pick<LookupInfo, 'mode' | 'why'> {
  if (requested === 'snapshot') return { mode: 'snapshot', why: 'asked for' };
  if (requested === 'each') {
    const unseen = lookalikes ? '; look-alikes of server keys are not checked' : '';
    return { mode: 'each', why: `asked for${unseen}` };
  }
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
