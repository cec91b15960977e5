/**
 * Reading many records of a batch at once, to settle what earlier calls did: after an unanswered
 * call, for rows in the send journal, or after a burst of "already exists". The interface reads
 * one exact key per GET and has no multi-key filter, so there are two ways:
 *
 * - in bulk: one unfiltered GET of the resource, streamed, keeping only the batch's keys. It costs
 *   one call but reads the whole directory, so it is taken only by an import that read the
 *   directory in bulk already (its snapshot: the directory is at most about 100 × the upload,
 *   see snapshot/lookup-mode.ts) and only for `BULK_SETTLE_FROM` records or more;
 * - one by one: a GET per record, `SETTLE_READS_AT_ONCE` in flight, for fewer records or an import
 *   read record by record (a directory far larger than the upload).
 *
 * Either way the batch's write calls stay few: what the reads find is settled, and only the rest
 * is sent, in one call.
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
import type { RecordLookup } from '../plan/lookup.js';
import { matchKey } from '../plan/natural-key.js';
import type { PlannedOp } from '../plan/planned-op.js';
import { mapConcurrent } from '../util/concurrency.js';

type AdminRecord = Record<string, unknown>;

/** Records to settle at once from which an import that took a snapshot reads them in bulk. */
export const BULK_SETTLE_FROM = 16;

/** Reads in flight at once when records are settled one by one. */
export const SETTLE_READS_AT_ONCE = 8;

export interface SettleReadOptions {
  resource: ResourceName;
  lookup: RecordLookup;
  /** From this many records, one bulk read; undefined: always one by one. */
  bulkFrom?: number;
  /** Reads one op's record alone. */
  readOne: (op: PlannedOp) => Promise<AdminRecord | undefined>;
}

/** The server's record for each op (creates by key, deletes by id), or undefined when absent. */
export async function readMany(
  ops: readonly PlannedOp[],
  options: SettleReadOptions,
): Promise<Map<PlannedOp, AdminRecord | undefined>> {
  const found = new Map<PlannedOp, AdminRecord | undefined>();
  if (options.bulkFrom !== undefined && ops.length >= options.bulkFrom) {
    const { resource } = options;
    const idField = RESOURCES[resource].idField;
    const labelOf = (op: PlannedOp): string =>
      op.action === 'delete'
        ? `id:${String(op.existingId)}`
        : `key:${matchKey(resource, op.payload)}`;
    const wanted = new Set(ops.map(labelOf));
    const byLabel = new Map<string, AdminRecord>();
    const records = (await options.lookup.readAll(resource, (record) => {
      const id = (record as AdminRecord)[idField];
      const key = matchKey(resource, record as AdminRecord);
      return wanted.has(`key:${key}`) || (id !== undefined && wanted.has(`id:${String(id)}`));
    })) as AdminRecord[];
    for (const record of records) {
      byLabel.set(`key:${matchKey(resource, record)}`, record);
      const id = record[idField];
      if (id !== undefined && id !== null) byLabel.set(`id:${String(id)}`, record);
    }
    for (const op of ops) found.set(op, byLabel.get(labelOf(op)));
    return found;
  }
  const read = await mapConcurrent(ops, SETTLE_READS_AT_ONCE, (op) => options.readOne(op));
  ops.forEach((op, index) => found.set(op, read[index]));
  return found;
}
