/**
 * A sync's preparation: the directory is read in bulk (never record by record), the server
 * records in scope that the file leaves out are found in Redis chunk by chunk and staged after
 * the upload's records with rows of their own, and their locks and deletes are counted against
 * the threshold. Over it, or when it would lock or delete while rows of its file failed without
 * a key, the sync plans only and ends `held`; nothing is written until approved.
 */
import { AdminError } from '../admin/errors.js';
import { RESOURCES } from '../admin/resources.js';
import type { BatchRef } from '../execute/run-batch.js';
import { recordErrorMessage } from '../execute/record-error.js';
import { withReadRetry } from '../execute/retry-policy.js';
import type { ImportInfo, StagedRecord, SyncPlanInfo } from '../model/import.js';
import { batchRefs } from '../queue/import-queue.js';
import { buildSnapshot, type SnapshotSummary } from '../snapshot/build-snapshot.js';
import type { PrepareDeps } from '../snapshot/prepare-deps.js';
import { decodeCompact } from '../snapshot/record-codec.js';
import { missingListKey, snapshotKeys } from '../snapshot/snapshot-keys.js';
import type { LookupInfo } from '../snapshot/lookup-mode.js';
import { compileScopePattern, deletionThreshold, holdReasons, keyInScope } from './sync-options.js';
import { decideMissing, syncRules } from './sync-rules.js';

/** Missing keys read per Redis round trip. */
const CHUNK = 1000;

/** Thrown when a sync cannot go on safely; the import fails and nothing is written. */
class SyncAbort extends Error {}

export async function prepareSync(
  importId: string,
  info: ImportInfo,
  deps: PrepareDeps,
): Promise<BatchRef[]> {
  const { store } = deps;
  const { options } = info;
  const refs = async (): Promise<BatchRef[]> => [
    ...batchRefs(importId, await store.stagedCount(importId), options.batchSize),
  ];
  // prepared already (this job ran before and its batches may have run): the same batches again
  if (info.sync !== undefined) return refs();
  try {
    if (options.sync === undefined) throw new SyncAbort('the sync has no sync options');
    const snapshot = await takeSnapshot(importId, info, deps);
    const lookup: LookupInfo = {
      mode: 'snapshot',
      requested: 'snapshot',
      why: 'a sync reads the whole directory',
      takenAt: snapshot.takenAt,
      records: snapshot.records,
      kept: snapshot.kept,
      durationMs: snapshot.durationMs,
    };
    await store.setLookup(importId, lookup);
    await deps.redis.unlink(store.uploadKeysKey(importId), store.uploadLookalikesKey(importId));
    let plan: SyncPlanInfo;
    if (info.applyOf !== undefined) {
      // a plan written: its records (those only on the server too) were copied with it. An
      // approved held sync passes its threshold; a sync's dry run applied is held like a sync
      const source = (await store.get(info.applyOf))?.sync ?? emptyPlan();
      const over = holdReasons(source).length > 0;
      plan = { ...source, held: source.held ? false : over, approvedFrom: info.applyOf };
      if (!source.held) delete plan.approvedFrom;
    } else {
      plan = await stageMissing(importId, info, deps, snapshot);
    }
    const staged = await store.stagedCount(importId);
    await store.endServerRows(importId, Math.ceil(staged / options.batchSize), plan);
    return refs();
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    if (!(error instanceof SyncAbort) && !(error instanceof AdminError)) throw error;
    const why = error instanceof AdminError ? recordErrorMessage(error) : error.message;
    const reason = `sync aborted, nothing written: ${why}`;
    await store.transition(importId, ['queued', 'running', 'paused'], 'failed', reason);
    await store.recordUnprocessed(importId, { errorCode: 'PORTER_SYNC_ABORTED', error: reason });
    return [];
  }
}

function emptyPlan(): SyncPlanInfo {
  return {
    inScope: 0,
    missing: 0,
    locks: 0,
    deletes: 0,
    spared: 0,
    threshold: 0,
    held: false,
  };
}

/** The whole directory in bulk, with the records the file leaves out; a failed read aborts. */
async function takeSnapshot(
  importId: string,
  info: ImportInfo,
  deps: PrepareDeps,
): Promise<SnapshotSummary> {
  const { store, redis } = deps;
  const { resource, sync, allowLookalike } = info.options;
  const staged = await store.stagedCount(importId);
  const keysKept = await redis.exists(
    store.uploadKeysKey(importId),
    store.uploadLookalikesKey(importId),
  );
  if (staged > 0 && keysKept === 0) {
    throw new SyncAbort("the upload's keys expired before a worker prepared it; run it again");
  }
  const approval = info.applyOf !== undefined;
  let inScope: ((record: Record<string, unknown>) => boolean) | undefined;
  if (!approval) {
    const pattern = sync?.scopeMatch ? compileScopePattern(sync.scopeMatch) : undefined;
    const groupId = sync?.scopeGroup ? await scopeGroupId(sync.scopeGroup, deps) : undefined;
    const keyField = RESOURCES[resource].keyField;
    inScope = (record) =>
      keyInScope(pattern, String(record[keyField] ?? '')) &&
      (groupId === undefined ||
        (Array.isArray(record.groups) && (record.groups as unknown[]).includes(groupId)));
  }
  try {
    return await withReadRetry(
      () =>
        buildSnapshot({
          redis,
          client: deps.client,
          keys: snapshotKeys(store.prefix, importId),
          resource,
          uploadKeys: store.uploadKeysKey(importId),
          uploadLookalikes:
            allowLookalike === true || approval ? undefined : store.uploadLookalikesKey(importId),
          needs: { groupIndex: resource !== 'groups', userIndex: resource === 'groups' },
          ttlSeconds: store.ttlSeconds,
          signal: deps.signal,
          sync: inScope && {
            missingList: missingListKey(store.prefix, importId),
            inScope,
          },
        }),
      deps.retry,
      { signal: deps.signal },
    );
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    const why = error instanceof AdminError ? recordErrorMessage(error) : String(error);
    throw new SyncAbort(`the directory could not be read in bulk (${why})`);
  }
}

async function scopeGroupId(name: string, deps: PrepareDeps): Promise<number> {
  const found = await withReadRetry(
    () => deps.client.listGroups({ name }, deps.signal),
    deps.retry,
    {
      signal: deps.signal,
    },
  );
  const group = found.find((candidate) => candidate.name === name);
  if (group?.id === undefined) {
    throw new SyncAbort(`the scope group ${JSON.stringify(name)} does not exist on the server`);
  }
  return group.id;
}

/**
 * Stages the records the file leaves out (unless they are ignored), after the upload's, and
 * decides from the snapshot how many would be locked or deleted.
 */
async function stageMissing(
  importId: string,
  info: ImportInfo,
  deps: PrepareDeps,
  snapshot: SnapshotSummary,
): Promise<SyncPlanInfo> {
  const { store, redis } = deps;
  const { resource, sync, allowAdmin, dryRun } = info.options;
  const rules = syncRules(resource, sync!, allowAdmin, deps.selfUser);
  const plan = emptyPlan();
  plan.inScope = snapshot.inScope ?? 0;
  plan.missing = snapshot.missing ?? 0;
  let row = await store.beginServerRows(importId);
  const listKey = missingListKey(store.prefix, importId);
  if (rules.missing !== 'ignore') {
    const keyField = RESOURCES[resource].keyField;
    const recordsKey = snapshotKeys(store.prefix, importId).records;
    for (let start = 0; ; start += CHUNK) {
      const entries = (await redis.lrange(listKey, start, start + CHUNK - 1)).map(
        (entry) => JSON.parse(entry) as [string, string?],
      );
      if (entries.length === 0) break;
      const records = await redis.hmget(recordsKey, ...entries.map(([key]) => key));
      const staged: StagedRecord[] = entries.map(([key, lookalikeOf], index) => {
        const text = records[index];
        if (text) {
          const decision = decideMissing(rules, key, decodeCompact(resource, text), lookalikeOf);
          if (decision.kind === 'lock') plan.locks++;
          else if (decision.kind === 'delete') plan.deletes++;
          else plan.spared++;
        }
        return {
          row: ++row,
          input: {},
          record: { [keyField]: key },
          serverOnly: lookalikeOf === undefined ? {} : { lookalikeOf },
        };
      });
      await store.addServerRows(importId, staged);
      if (entries.length < CHUNK) break;
    }
  }
  await redis.unlink(listKey);
  plan.threshold = deletionThreshold(sync!.maxDeletes, plan.inScope);
  if ((info.unnamedFailures ?? 0) > 0) plan.unnamed = info.unnamedFailures;
  const read = info.options.source;
  if (read && read.since === undefined && read.entries === 0 && (read.lastEntries ?? 0) > 0) {
    plan.sourceEmptied = read.lastEntries;
  }
  plan.held = dryRun !== true && holdReasons(plan).length > 0;
  return plan;
}
