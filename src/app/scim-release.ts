/**
 * Releasing a held SCIM plan (scim-hold.ts): `porter approve ID` of a plan whose source is
 * `scim`. The held plan becomes completed once (two approvals at the same time write it once);
 * a new import (`applyOf` names the plan) applies its changes in multi-record calls (locks with
 * locks, deletes with deletes) and records each one's result; each held change then answers
 * the provider's retry from that result.
 */
import { recordApproval } from '../auth/four-eyes.js';
import type { UserRecord } from '../admin/schemas.js';
import { isPorterError, PorterError } from '../errors/porter-error.js';
import type { ImportInfo, RecordResult } from '../model/import.js';
import { newImportId } from '../results/import-id.js';
import { bindTarget } from '../targets/job-target.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import type { PorterContext } from './context.js';
import { holdKeys, type HoldEntry } from './scim-hold.js';
import type { ScimResource } from './scim-journal.js';

/** Records per call of a release. */
const RELEASE_CHUNK = 100;

/** Whether an import is a held SCIM plan (released by scim-release, not by a worker). */
export function isScimPlan(plan: ImportInfo): boolean {
  return plan.source === 'scim' && plan.applyOf === undefined;
}

export async function releaseScimPlan(
  context: PorterContext,
  plan: ImportInfo,
  onCreated?: (info: ImportInfo) => void,
): Promise<ImportInfo> {
  const { store, redis } = context;
  const options = {
    ...plan.options,
    ...bindTarget(context.targets, { ...plan.options }, { writes: true }).ref,
  };
  const target = options.target ?? DEFAULT_TARGET;
  const applicationId = newImportId();
  if (
    !(await store.transition(
      plan.id,
      ['held'],
      'completed',
      `approved; written by import ${applicationId}`,
    ))
  ) {
    throw new PorterError('PORTER_CONFLICT', `import ${plan.id} is no longer held`);
  }
  await store.setLinks(plan.id, {
    approvedAt: new Date().toISOString(),
    writtenBy: applicationId,
  });
  await recordApproval(redis, store.keys(plan.id).meta, plan, applicationId);
  const application = await store.create({
    id: applicationId,
    options,
    source: plan.source,
    applyOf: plan.id,
    columns: plan.columns,
  });
  onCreated?.(application);

  const planned: RecordResult[] = [];
  for await (const result of store.results(plan.id, { status: ['planned'] })) planned.push(result);
  const resource = options.resource === 'groups' ? 'groups' : 'users';
  const results = await applyHeld(context, target, resource, planned);
  if (results.length > 0) await store.recordResults(applicationId, results);
  const info = await store.markReceived(applicationId, { total: results.length, batches: 0 });

  // each held change answers the provider's retry from its result
  const keys = holdKeys(context, target, resource);
  const entries = results.map((result): [string, string] => {
    const entry: HoldEntry = {
      planId: plan.id,
      kind: result.action === 'delete' ? 'delete' : 'lock',
      row: result.row,
      outcome: result.status === 'succeeded' ? 'applied' : 'failed',
      ...(result.errorCode !== undefined ? { code: String(result.errorCode) } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
    };
    return [String(result.id), JSON.stringify(entry)];
  });
  if (entries.length > 0) await redis.hset(keys.entries, Object.fromEntries(entries));
  return info;
}

/** Applies held locks and deletes, a multi-record call per chunk; one result per change. */
async function applyHeld(
  context: PorterContext,
  target: string,
  resource: ScimResource,
  planned: RecordResult[],
): Promise<RecordResult[]> {
  const client = context.createAdminClient(4, context.targets.resolve(target));
  const results: RecordResult[] = [];
  const outcome = (result: RecordResult, error?: unknown): RecordResult => {
    const failure =
      error === undefined
        ? undefined
        : isPorterError(error)
          ? error
          : new PorterError('PORTER_INTERNAL', 'the release of a held change failed');
    return {
      row: result.row,
      key: result.key,
      action: result.action,
      id: result.id,
      input: result.input,
      status: failure ? 'failed' : 'succeeded',
      ...(failure ? { errorCode: failure.code, error: failure.message } : {}),
    };
  };
  try {
    const locks = planned.filter((result) => result.action === 'lock');
    const deletes = planned.filter((result) => result.action === 'delete');
    if (locks.length > 0) {
      const current = new Map(
        (await client.listUsers()).map((user) => [user.userId, user] as const),
      );
      for (let start = 0; start < locks.length; start += RELEASE_CHUNK) {
        const part = locks.slice(start, start + RELEASE_CHUNK);
        const gone = part.filter((result) => !current.has(Number(result.id)));
        for (const result of gone) {
          results.push(
            outcome(
              result,
              new PorterError('PORTER_NOT_FOUND', `user ${result.id} is no longer on the target`),
            ),
          );
        }
        const present = part.filter((result) => current.has(Number(result.id)));
        if (present.length === 0) continue;
        const records = present.map(
          (result) => ({ ...current.get(Number(result.id))!, status: 'Locked' }) as UserRecord,
        );
        try {
          await client.putUsers(records);
          results.push(...present.map((result) => outcome(result)));
        } catch (error) {
          results.push(...present.map((result) => outcome(result, error)));
        }
      }
    }
    for (let start = 0; start < deletes.length; start += RELEASE_CHUNK) {
      const part = deletes.slice(start, start + RELEASE_CHUNK);
      try {
        if (resource === 'groups') {
          await client.deleteGroups(part.map((result) => ({ id: Number(result.id) })));
        } else {
          await client.deleteUsers(part.map((result) => ({ userId: Number(result.id) })));
        }
        results.push(...part.map((result) => outcome(result)));
      } catch (error) {
        results.push(...part.map((result) => outcome(result, error)));
      }
    }
  } finally {
    await client.close();
  }
  return results.sort((a, b) => a.row - b.row);
}
