import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../../src/execute/retry-policy.js';
import { executeOps } from '../../src/execute/execute-batch.js';
import { RecordLookup } from '../../src/plan/lookup.js';
import { planBatch } from '../../src/plan/plan-batch.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const retry = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 5 };
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('a create answered "already exists" for a record absent when the import looked', () => {
  it('is succeeded when the record holds what the import would write (a second run of the batch), failed when not', async () => {
    const records = [
      { username: 'twice.same', email: 'same@example.com', firstName: 'Sam' },
      { username: 'twice.other', email: 'mine@example.com' },
      { username: 'twice.new', email: 'new@example.com' },
    ];
    const lookup = new RecordLookup({ client: sandbox.client, retry });
    const plan = await planBatch(
      records.map((record, index) => ({ row: index + 1, input: { ...record }, record })),
      { resource: 'users', mode: 'create', allowAdmin: false, lookup },
    );
    // between the look and the call: a second run of this batch creates the first record as
    // this import would, and someone else creates the second with other values
    const [same] = await sandbox.client.postUsers([
      { username: 'twice.same', email: 'same@example.com', firstName: 'Sam' },
    ]);
    await sandbox.client.postUsers([{ username: 'twice.other', email: 'theirs@example.com' }]);

    const { results } = await executeOps(plan.ops, {
      client: sandbox.client,
      resource: 'users',
      lookup: new RecordLookup({ client: sandbox.client, retry }),
      retry,
    });
    expect(results.map((result) => [result.key, result.status, result.errorCode])).toEqual([
      ['twice.same', 'succeeded', undefined],
      ['twice.other', 'failed', 'ALREADY_EXISTS'],
      ['twice.new', 'succeeded', undefined],
    ]);
    expect(results[0]!.id).toBe(same!.userId);
  });
});
