/**
 * Runs once per import, after its upload is whole and before its first batch: decides how the
 * import looks records up, reads the directory in bulk when it should, and hands back the
 * batches to queue. Safe to run again (a retried job): the snapshot is rebuilt from nothing and
 * the batches are queued under the same ids.
 */
import { AdminError } from '../admin/errors.js';
import type { BatchRef, BoundTarget } from '../execute/run-batch.js';
import { isTargetRefusal } from '../targets/job-target.js';
import { recordErrorMessage } from '../execute/record-error.js';
import { FINAL_IMPORT_STATES, WORKING_IMPORT_STATES } from '../model/import.js';
import { batchRefs } from '../queue/import-queue.js';
import type { ImportStore } from '../results/import-store.js';
import { prepareSync } from '../sync/prepare-sync.js';
import type { SnapshotParticipant } from './build-snapshot.js';
import { PorterError } from '../errors/porter-error.js';
import type { PrepareDeps, UnboundPrepareDeps } from './prepare-deps.js';
import { checksLookalikes, chooseLookup, type LookupInfo } from './lookup-mode.js';
import { directorySizeKey, snapshotKeys } from './snapshot-keys.js';
import { lookalikeReadFailed, snapshotAttempts } from './lookalike-read.js';
import { readSnapshot, scanServerKeys } from './snapshot-read.js';
import { prepareStream } from './prepare-stream.js';

export { LookalikeReadError } from './lookalike-read.js';

function bound(deps: UnboundPrepareDeps, target: BoundTarget): PrepareDeps {
  const { bindTarget: _unused, ...rest } = deps;
  return {
    ...rest,
    client: target.client,
    selfUser: target.selfUser,
    target: target.key ?? 'default',
  };
}

/** Days the last snapshot's directory size is remembered for the `auto` rule. */
const DIRECTORY_SIZE_TTL_SECONDS = 30 * 24 * 3600;

/** Prepares the import; returns its batches, none when it no longer runs. */
export async function prepareImport(
  importId: string,
  given: PrepareDeps | UnboundPrepareDeps,
): Promise<BatchRef[]> {
  const { store, redis } = given;
  const info = await store.get(importId);
  if (!info) return [];
  if (FINAL_IMPORT_STATES.has(info.state)) {
    await store.recordUnprocessed(importId, {
      errorCode: 'PORTER_CANCELLED',
      error: `not sent: the import ended ${info.state} before its first batch`,
    });
    return [];
  }
  let deps: PrepareDeps;
  try {
    deps = 'bindTarget' in given ? bound(given, given.bindTarget(info.options)) : given;
  } catch (error) {
    if (!isTargetRefusal(error)) throw error;
    // nothing of the import is read from or sent to another server than the one it names
    // (a streamed import is prepared while it is receiving)
    await store.transition(importId, WORKING_IMPORT_STATES, 'failed', error.message);
    await store.recordUnprocessed(importId, {
      errorCode: error.code,
      error: `not sent: ${error.message}`,
    });
    return [];
  }
  if (info.options.mode === 'sync') return prepareSync(importId, info, deps);
  if (info.options.stream === true) return prepareStream(importId, info, deps, given.onResumed);
  const staged = await store.stagedCount(importId);
  // prepared already (this job ran to its end before, and queueing its batches or finishing the
  // job failed): the upload's keys are gone, the same batches again
  if (info.lookup !== undefined) return [...batchRefs(importId, staged, info.options.batchSize)];
  const { resource } = info.options;
  const sizeKey = directorySizeKey(store.prefix, deps.target, resource);
  const knownSize = await redis.get(sizeKey);
  const requested = info.options.lookup ?? 'auto';
  // an undo puts back what was there: it creates no key of its own to compare
  const lookalikes = checksLookalikes(info.options) && info.undoOf === undefined;
  const choice = chooseLookup(
    requested,
    staged,
    knownSize === null ? undefined : Number(knownSize),
    lookalikes,
  );
  let lookup: LookupInfo = { ...choice, requested };
  // an upload that compares look-alikes may keep its keys with their forms alone
  const keysKept =
    resource === 'acls' ||
    (await redis.exists(store.uploadKeysKey(importId), store.uploadLookalikesKey(importId))) > 0;
  if (lookalikes && staged > 0 && !keysKept) {
    // without the upload's keys no server key can be compared with them: nothing is sent
    throw new PorterError(
      'PORTER_CONFLICT',
      "the upload's keys expired before a worker prepared the import, so look-alikes of server keys cannot be checked; run porter retry ID",
    );
  }
  if (choice.mode === 'snapshot' && staged > 0 && !keysKept) {
    // the upload's keys expired before a worker came (a day): without them a snapshot cannot
    // tell which records the upload names
    lookup = { mode: 'each', requested, why: "the upload's keys expired before preparation" };
  } else if (choice.mode === 'snapshot' && staged > 0) {
    const userIndex = resource === 'groups' && (await stagedCarries(store, importId, 'users'));
    try {
      const participant: SnapshotParticipant = {
        keys: snapshotKeys(store.prefix, importId),
        uploadKeys: store.uploadKeysKey(importId),
        uploadLookalikes: lookalikes ? store.uploadLookalikesKey(importId) : undefined,
        needs: { groupIndex: resource !== 'groups', userIndex },
        ttlSeconds: store.ttlSeconds,
      };
      const summary = await readSnapshot(deps, resource, participant);
      lookup = { ...lookup, ...summary };
      await redis.set(sizeKey, summary.records, 'EX', DIRECTORY_SIZE_TTL_SECONDS);
    } catch (error) {
      if (deps.signal?.aborted) throw error;
      // look-alikes can only be compared with every key: without them nothing may be created,
      // so the import waits (paused) until the server can be read
      if (lookalikes) throw lookalikeReadFailed(resource, snapshotAttempts(deps.retry), error);

      // a server that will not be read in bulk can still be read record by record; the batches
      // meet whatever else is wrong and report it per record
      const reason = error instanceof AdminError ? recordErrorMessage(error) : String(error);
      lookup = {
        mode: 'each',
        requested,
        why: `bulk read failed (${reason}); one read per record`,
      };
    }
  }
  if (lookup.mode === 'each' && lookalikes && staged > 0) {
    const records = await scanServerKeys(
      deps,
      importId,
      resource as 'users' | 'groups',
      store.uploadLookalikesKey(importId),
    );
    lookup = {
      ...lookup,
      why: `${lookup.why}; look-alikes compared with ${records} keys on the server`,
    };
  }
  await store.setLookup(importId, lookup);
  await redis.unlink(store.uploadKeysKey(importId), store.uploadLookalikesKey(importId));
  // an import paused while its server could not be read runs now that it was read
  if (await store.resume(importId)) given.onResumed?.(importId);
  return [...batchRefs(importId, staged, info.options.batchSize)];
}

/** Whether any staged record carries this field (groups uploads are small: read them all). */
async function stagedCarries(
  store: ImportStore,
  importId: string,
  field: string,
): Promise<boolean> {
  const chunk = 1000;
  for (let start = 0; ; start += chunk) {
    const records = await store.readStaged(importId, start, chunk);
    if (records.some((staged) => staged.record[field] !== undefined)) return true;
    if (records.length < chunk) return false;
  }
}
