import { describe, expect, it } from 'vitest';
import { executeOps, type ExecuteContext } from '../../src/execute/execute-batch.js';
import { DEFAULT_RETRY_POLICY } from '../../src/execute/retry-policy.js';
import { BULK_SETTLE_FROM } from '../../src/execute/settle-reads.js';
import { RecordLookup } from '../../src/plan/lookup.js';
import { planBatch } from '../../src/plan/plan-batch.js';
import type { PlannedOp } from '../../src/plan/planned-op.js';
import { useSandbox, type TestSandbox } from '../helpers/sandbox.js';

const retry = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 5 };
const sandbox = useSandbox();

const users = (count: number, tag: string): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, index) => ({
    username: `${tag}.${index}`,
    email: `${tag}.${index}@example.com`,
  }));

/** Plans creates while the server holds none of them: the ops a snapshot taken before would give. */
async function planCreates(
  test: TestSandbox,
  records: Record<string, unknown>[],
): Promise<PlannedOp[]> {
  const plan = await planBatch(
    records.map((record, index) => ({ row: index + 1, input: { ...record }, record })),
    {
      resource: 'users',
      mode: 'create',
      allowAdmin: false,
      lookup: new RecordLookup({ client: test.client, retry }),
    },
  );
  expect(plan.ops).toHaveLength(records.length);
  return plan.ops;
}

/** Runs the ops and gives the requests the sandbox saw meanwhile. */
async function run(
  test: TestSandbox,
  ops: PlannedOp[],
  context: Partial<ExecuteContext> = {},
): Promise<{
  results: Awaited<ReturnType<typeof executeOps>>['results'];
  gets: number;
  posts: number;
}> {
  const before = structuredClone(test.store.stats);
  const { results } = await executeOps(ops, {
    client: test.client,
    resource: 'users',
    lookup: new RecordLookup({ client: test.client, retry }),
    retry,
    ...context,
  });
  const after = test.store.stats;
  return {
    results,
    gets: after.requests.GET - before.requests.GET,
    posts: after.writes.users.POST - before.writes.users.POST,
  };
}

describe('a batch whose creates all landed before Redis lost its results (a rolled-back AOF)', () => {
  it('rows in the send journal: settled with one bulk read and no write call', async () => {
    const test = sandbox();
    const records = users(100, 'journaled');
    const ops = await planCreates(test, records);
    // the earlier run's call landed; Redis lost its results but kept the journal
    await test.client.postUsers(records.map((record) => ({ ...record })));

    const { results, gets, posts } = await run(test, ops, {
      uncertainRows: ops.map((op) => op.row),
      bulkSettleFrom: BULK_SETTLE_FROM,
    });
    expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(100);
    expect(results.every((result) => typeof result.id === 'number')).toBe(true);
    expect(posts).toBe(0);
    expect(gets).toBe(1);
  });

  it('journal lost too: the "already exists" burst costs one write call and one bulk read, not one per record', async () => {
    const test = sandbox();
    const records = users(100, 'lost');
    const ops = await planCreates(test, records);
    await test.client.postUsers(records.map((record) => ({ ...record })));

    const { results, gets, posts } = await run(test, ops, { bulkSettleFrom: BULK_SETTLE_FROM });
    expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(100);
    expect(posts).toBe(1);
    expect(gets).toBe(1);
    expect(test.store.stats.refusals.ALREADY_EXISTS).toBe(1);
  });

  it('some landed, some did not, one is someone else’s: two write calls, one bulk read', async () => {
    const test = sandbox();
    const records = users(40, 'mixed');
    const ops = await planCreates(test, records);
    // the first half landed; the last record of it was created by someone else, differently
    await test.client.postUsers(records.slice(0, 19).map((record) => ({ ...record })));
    await test.client.postUsers([{ username: 'mixed.19', email: 'theirs@example.com' }]);

    const { results, gets, posts } = await run(test, ops, { bulkSettleFrom: BULK_SETTLE_FROM });
    const byKey = new Map(results.map((result) => [result.key, result]));
    expect(byKey.get('mixed.0')?.status).toBe('succeeded');
    expect(byKey.get('mixed.19')).toMatchObject({ status: 'failed', errorCode: 'ALREADY_EXISTS' });
    expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(39);
    expect(test.store.stats.applied.users.created).toBe(40);
    expect(posts).toBe(2);
    expect(gets).toBe(1);
  });

  it('an import read record by record reads them one by one (in parallel), still with one write call', async () => {
    const test = sandbox();
    const records = users(30, 'each');
    const ops = await planCreates(test, records);
    await test.client.postUsers(records.map((record) => ({ ...record })));

    const { results, gets, posts } = await run(test, ops);
    expect(results.filter((result) => result.status === 'succeeded')).toHaveLength(30);
    expect(posts).toBe(1);
    expect(gets).toBe(30);
  });
});
