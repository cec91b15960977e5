/**
 * The preparation of a streamed import (docs/streaming.md): it runs as the upload starts, so it
 * cannot know which records the upload names. It reads the whole directory (every record kept,
 * every key by its look-alike form), or with `lookup each` only the keys' forms, and then queues
 * the batches whose records are in so far; the producer queues the rest as they come
 * (claimStream: each batch is queued by one of the two).
 */
import { AdminError } from '../admin/errors.js';
import type { BatchRef } from '../execute/run-batch.js';
import { recordErrorMessage } from '../execute/record-error.js';
import type { ImportInfo, LookupInfo } from '../model/import.js';
import { streamBatchRefs, streamJobs } from '../queue/import-queue.js';
import type { SnapshotParticipant } from './build-snapshot.js';
import { lookalikeReadFailed, snapshotAttempts } from './lookalike-read.js';
import { checksLookalikes } from './lookup-mode.js';
import type { PrepareDeps } from './prepare-deps.js';
import { readSnapshot, scanServerKeys } from './snapshot-read.js';
import { snapshotKeys } from './snapshot-keys.js';

/** Prepares a streamed import; returns the batches it queues (those staged so far). */
export async function prepareStream(
  importId: string,
  info: ImportInfo,
  deps: PrepareDeps,
  onResumed?: (importId: string) => void,
): Promise<BatchRef[]> {
  const { store } = deps;
  const { batchSize } = info.options;
  // prepared already (the job runs again): the batches claimed so far are queued again, which
  // adds none twice while their jobs exist, and a batch run again finds its rows done
  if (info.lookup === undefined) {
    await store.setLookup(importId, await readDirectory(importId, info, deps));
    if (await store.resume(importId)) onResumed?.(importId);
  }
  const { to } = await store.claimStream(importId, streamJobs(batchSize));
  return [...streamBatchRefs(importId, 0, to, batchSize)];
}

/** Reads what the import's batches look records up in, before its first batch. */
async function readDirectory(
  importId: string,
  info: ImportInfo,
  deps: PrepareDeps,
): Promise<LookupInfo> {
  const { store } = deps;
  const { resource } = info.options;
  const requested = info.options.lookup ?? 'auto';
  const lookalikes = checksLookalikes(info.options);
  const keys = snapshotKeys(store.prefix, importId);
  if (requested !== 'each') {
    const participant: SnapshotParticipant = {
      keys,
      uploadKeys: store.uploadKeysKey(importId),
      // its records' references are not known yet: both indexes are read
      needs: { groupIndex: resource !== 'groups', userIndex: resource === 'groups' },
      ttlSeconds: store.ttlSeconds,
      whole: { lookalikes },
    };
    try {
      const summary = await readSnapshot(deps, resource, participant);
      const why =
        requested === 'snapshot'
          ? 'asked for'
          : 'a streamed upload is not whole when its batches start: the whole directory is read';
      return { mode: 'snapshot', requested, why, ...summary };
    } catch (error) {
      if (deps.signal?.aborted) throw error;
      if (lookalikes) throw lookalikeReadFailed(resource, snapshotAttempts(deps.retry), error);
      const reason = error instanceof AdminError ? recordErrorMessage(error) : String(error);
      return { mode: 'each', requested, why: `bulk read failed (${reason}); one read per record` };
    }
  }
  const lookup: LookupInfo = { mode: 'each', requested, why: 'asked for' };
  if (!lookalikes) return lookup;
  const records = await scanServerKeys(deps, importId, resource as 'users' | 'groups', undefined);
  return { ...lookup, why: `asked for; look-alikes compared with ${records} keys on the server` };
}
