/** Where an import lives in Redis: one place that spells every key and channel. */
import { importKeyBase } from '../redis/key-tags.js';

/** The keys of one import, in the order every import script takes them. */
export interface ImportKeys {
  /** Hash: state, options, timestamps, total, batches, columns. */
  meta: string;
  /** Hash: result status → number of rows with that status. */
  counts: string;
  /** Hash: compact result JSON, a bucket of 64 rows per field (row-buckets.ts). */
  results: string;
  /** List of staged records, a batch per element (staged-packs.ts), in upload order, until the import settles. */
  staged: string;
  /** Bitmap: bit row − 1 is set once the row has its result. */
  done: string;
  /** Hash of what undoing each changed record needs (undo-log.ts); not a script key. */
  undo: string;
}

export function importKeys(prefix: string, importId: string): ImportKeys {
  const base = `${importKeyBase(prefix, importId)}`;
  return {
    meta: `${base}:meta`,
    counts: `${base}:counts`,
    results: `${base}:results`,
    staged: `${base}:staged`,
    done: `${base}:done`,
    undo: `${base}:undo`,
  };
}

/** The keys as the KEYS array of a script (meta, counts, results, staged, done). */
export function importKeyList(keys: ImportKeys): string[] {
  return [keys.meta, keys.counts, keys.results, keys.staged, keys.done];
}

/**
 * The send journal's keys (send-journal.ts): the bitmap of rows handed to the admin server, and
 * the set of row numbers an earlier version kept.
 */
export function sentRowsKeys(prefix: string, importId: string): { bitmap: string; set: string } {
  const base = importKeyBase(prefix, importId);
  return { bitmap: `${base}:sent-rows`, set: `${base}:sent` };
}

/** Sorted set of import ids scored by creation time (ms), for listing. */
export function importIndexKey(prefix: string): string {
  return `${prefix}:imports`;
}

/** Pub/sub channel where a small JSON message announces final and settled imports. */
export function importEventsChannel(prefix: string): string {
  return `${prefix}:import-events`;
}

/** Hash of the natural keys an upload carries (key → first row): duplicates, then the snapshot's filter. */
export function uploadKeysKey(prefix: string, importId: string): string {
  return `${importKeyBase(prefix, importId)}:keys`;
}

/** Hash of the upload's look-alike key forms (form → "row:key"): look-alikes in the upload and on the server. */
export function uploadLookalikesKey(prefix: string, importId: string): string {
  return `${importKeyBase(prefix, importId)}:lookalikes`;
}
