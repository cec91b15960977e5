import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../../src/execute/retry-policy.js';
import { RecordLookup } from '../../src/plan/lookup.js';
import { planBatch } from '../../src/plan/plan-batch.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const retry = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1 };
const lookup = (): RecordLookup => new RecordLookup({ client: sandbox.client, retry });

describe('a batch planned again after a crash (rows in the send journal)', () => {
  it('a create that landed before the crash is this import’s own: succeeded with its id', async () => {
    const [landed] = await sandbox.client.postUsers([{ username: 'crashed.create' }]);
    const plan = await planBatch([{ row: 1, input: {}, record: { username: 'crashed.create' } }], {
      resource: 'users',
      mode: 'create',
      allowAdmin: false,
      lookup: lookup(),
      sentBefore: new Set([1]),
    });
    expect(plan.ops).toEqual([]);
    expect(plan.decided[0]).toMatchObject({
      status: 'succeeded',
      action: 'create',
      id: landed!.userId,
    });
  });

  it('the same record not in the journal existed before: ALREADY_EXISTS', async () => {
    const plan = await planBatch([{ row: 2, input: {}, record: { username: 'crashed.create' } }], {
      resource: 'users',
      mode: 'create',
      allowAdmin: false,
      lookup: lookup(),
      sentBefore: new Set([1]),
    });
    expect(plan.decided[0]).toMatchObject({ status: 'failed', errorCode: 'ALREADY_EXISTS' });
  });

  it('a delete whose record is gone after the crash is succeeded, not skipped', async () => {
    const plan = await planBatch([{ row: 3, input: {}, record: { username: 'never.here' } }], {
      resource: 'users',
      mode: 'delete',
      allowAdmin: false,
      lookup: lookup(),
      sentBefore: new Set([3]),
    });
    expect(plan.decided[0]).toMatchObject({ status: 'succeeded', action: 'delete' });
  });

  it('an ACL create that landed is succeeded too', async () => {
    const [group] = await sandbox.client.postGroups([{ name: 'crash group' }]);
    const [acl] = await sandbox.client.putAcls([{ name: 'crash acl', groupId: group!.id }]);
    const plan = await planBatch(
      [{ row: 4, input: {}, record: { name: 'crash acl', groupId: group!.id } }],
      {
        resource: 'acls',
        mode: 'create',
        allowAdmin: false,
        lookup: lookup(),
        sentBefore: new Set([4]),
      },
    );
    expect(plan.decided[0]).toMatchObject({ status: 'succeeded', id: acl!.id });
  });
});
