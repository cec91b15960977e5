/** An import's reads of the directory before its first batch: its snapshot, or every key. */
import type { ResourceName } from '../admin/resources.js';
import { withReadRetry } from '../execute/retry-policy.js';
import {
  buildSnapshots,
  scanLookalikes,
  type SnapshotParticipant,
  type SnapshotSummary,
} from './build-snapshot.js';
import { lookalikeReadFailed, snapshotAttempts } from './lookalike-read.js';
import { snapshotKeys } from './snapshot-keys.js';
import type { PrepareDeps } from './prepare-deps.js';
import type { ReadRunner } from './shared-reads.js';

/**
 * Reads the directory of `resource` into the participant's snapshot; imports of this target and
 * resource prepared at the same time share one read.
 */
export async function readSnapshot(
  deps: PrepareDeps,
  resource: ResourceName,
  participant: SnapshotParticipant,
): Promise<SnapshotSummary> {
  const { redis, client } = deps;
  const run: ReadRunner = (participants, signal) =>
    withReadRetry(
      () => buildSnapshots({ redis, client, resource, signal }, participants),
      // the snapshot only saves reads: a server that keeps refusing it is read record by
      // record sooner rather than after every attempt a write would get
      { ...deps.retry, maxAttempts: snapshotAttempts(deps.retry) },
      { signal },
    );
  if (deps.snapshotReads) {
    return deps.snapshotReads.read(`${deps.target}\0${resource}`, participant, run, deps.signal);
  }
  return (await run([participant], deps.signal ?? new AbortController().signal))[0]!;
}

/**
 * Reads every key of the server's `resource` for an import read record by record, noting the
 * look-alikes its batches compare creates with (see scanLookalikes; `uploadLookalikes` none: a
 * streamed import's, every key by its form). A server failing for now is waited out
 * (LookalikeReadError). Returns the keys read.
 */
export function scanServerKeys(
  deps: PrepareDeps,
  importId: string,
  resource: 'users' | 'groups',
  uploadLookalikes: string | undefined,
): Promise<number> {
  const { redis, client, store } = deps;
  const attempts = snapshotAttempts(deps.retry);
  return withReadRetry(
    () =>
      scanLookalikes({
        redis,
        client,
        resource,
        uploadLookalikes,
        lookalikes: snapshotKeys(store.prefix, importId).lookalikes,
        ttlSeconds: store.ttlSeconds,
        signal: deps.signal,
      }),
    { ...deps.retry, maxAttempts: attempts },
    { signal: deps.signal },
  ).catch((error: unknown) => {
    if (deps.signal?.aborted) throw error;
    throw lookalikeReadFailed(resource, attempts, error);
  });
}
