/**
 * A write answer is checked against its request: records are matched by key, never by position
 * or count, and a record the answer leaves out is read back before it counts as applied.
 */
import { describe, expect, it } from 'vitest';
import type { AdminClient } from '../../src/admin/client.js';
import type { ResourceName } from '../../src/admin/resources.js';
import { executeOps } from '../../src/execute/execute-batch.js';
import { DEFAULT_RETRY_POLICY } from '../../src/execute/retry-policy.js';
import type { ImportMode } from '../../src/model/import.js';
import { RecordLookup } from '../../src/plan/lookup.js';
import { planBatch } from '../../src/plan/plan-batch.js';
import { useSandbox, type TestSandbox } from '../helpers/sandbox.js';

const retry = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 5 };
const NO_GROUP = 987_654;
const sandbox = useSandbox();

type Write = AdminClient['write'];

/** The sandbox's client with every write passed through `around`: a server that answers otherwise. */
function aroundWrites(
  test: TestSandbox,
  around: (write: Write, ...args: Parameters<Write>) => ReturnType<Write>,
): AdminClient {
  return new Proxy(test.client, {
    get(target, property, receiver) {
      if (property !== 'write') return Reflect.get(target, property, receiver) as unknown;
      return (...args: Parameters<Write>) => around(target.write.bind(target), ...args);
    },
  });
}

/**
 * Plans one batch, lets `between` change the server (someone else at work), then executes it.
 * Results come back in row order.
 */
async function runBatch(
  resource: ResourceName,
  mode: ImportMode,
  records: Record<string, unknown>[],
  options: { client?: AdminClient; between?: () => Promise<unknown> } = {},
) {
  const client = options.client ?? sandbox().client;
  const lookup = new RecordLookup({ client, retry });
  const staged = records.map((record, index) => ({ row: index + 1, input: {}, record }));
  const plan = await planBatch(staged, { resource, mode, allowAdmin: false, lookup });
  expect(plan.decided).toEqual([]);
  await options.between?.();
  const outcome = await executeOps(plan.ops, { client, resource, lookup, retry });
  return {
    ...outcome,
    results: [...outcome.results].sort((a, b) => a.row - b.row),
  };
}

const userId = (username: string): number | undefined =>
  sandbox().store.userByName(username)?.userId;

describe('a server that answers 200 with only the records it applied (--batch-failure omit)', () => {
  it.each(['create', 'upsert'] as const)(
    'users %s: the good records succeeded with their ids, the left-out ones failed ADMIN_NOT_APPLIED',
    async (mode) => {
      const test = sandbox();
      await test.client.postUsers([{ username: 'kept', firstName: 'Kept' }]);
      test.sandbox.setFaults({ batchFailure: 'omit' });
      const records =
        mode === 'create'
          ? [
              { username: 'a' },
              { username: 'bad.one', groups: [NO_GROUP] },
              { username: 'b' },
              { username: 'bad.two', groups: [NO_GROUP] },
            ]
          : [
              { username: 'a' },
              { username: 'kept', groups: [NO_GROUP] },
              { username: 'b' },
              { username: 'bad.two', groups: [NO_GROUP] },
            ];
      const { results, stats } = await runBatch('users', mode, records);
      expect(stats.writeCalls).toBe(1);
      expect(results).toMatchObject([
        { key: 'a', status: 'succeeded', id: userId('a') },
        { key: records[1]!.username, status: 'failed', errorCode: 'ADMIN_NOT_APPLIED' },
        { key: 'b', status: 'succeeded', id: userId('b') },
        { key: 'bad.two', status: 'failed', errorCode: 'ADMIN_NOT_APPLIED' },
      ]);
      expect(userId('a')).toBeTypeOf('number');
      expect(results[3]!.error).toMatch(/left out of the admin server's answer, and not found/);
      expect(test.store.userByName('bad.one')).toBeUndefined();
      expect(test.store.userByName('bad.two')).toBeUndefined();
      if (mode === 'upsert') {
        // the update left out was not applied: read back, the user does not hold what was sent
        expect(results[1]).toMatchObject({ id: userId('kept') });
        expect(results[1]!.error).toMatch(/holding other values in groups/);
        expect(test.store.userByName('kept')).toMatchObject({ groups: [], firstName: 'Kept' });
      }
    },
  );

  it('groups and ACLs: the same, matched by name and by groupId + name', async () => {
    const test = sandbox();
    test.sandbox.setFaults({ batchFailure: 'omit' });
    const groups = await runBatch('groups', 'create', [
      { name: 'g1' },
      { name: 'bad', users: [NO_GROUP] },
      { name: 'g2' },
    ]);
    const groupId = test.store.groupByName('g2')?.id;
    expect(groups.results).toMatchObject([
      { status: 'succeeded', id: test.store.groupByName('g1')?.id },
      { status: 'failed', errorCode: 'ADMIN_NOT_APPLIED' },
      { status: 'succeeded', id: groupId },
    ]);
    const acls = await runBatch('acls', 'create', [
      { groupId, name: 'read' },
      { groupId: NO_GROUP, name: 'read' },
      { groupId, name: 'write' },
    ]);
    const aclId = (name: string): string | undefined =>
      test.store.acls().find((acl) => acl.groupId === groupId && acl.name === name)?.id;
    expect(acls.results).toMatchObject([
      { status: 'succeeded', id: aclId('read') },
      { status: 'failed', errorCode: 'ADMIN_NOT_APPLIED' },
      { status: 'succeeded', id: aclId('write') },
    ]);
    expect(test.store.acls()).toHaveLength(2);
  });

  it('a record left out is read back: the real state decides', async () => {
    const test = sandbox();
    await test.client.postUsers([{ username: 'gone.meanwhile' }, { username: 'deleted' }]);
    test.sandbox.setFaults({ batchFailure: 'omit' });
    // between planning and the call, someone else deletes one of the users: the server leaves
    // that delete out of its answer, and gone is what was wanted
    const deletes = await runBatch(
      'users',
      'delete',
      [{ username: 'gone.meanwhile' }, { username: 'deleted' }],
      { between: () => test.client.deleteUsers([{ username: 'gone.meanwhile' }]) },
    );
    expect(deletes.results).toMatchObject([{ status: 'succeeded' }, { status: 'succeeded' }]);
    expect(test.store.users()).toEqual([]);
    // someone else creates two of the users: one as this batch would, one otherwise
    const creates = await runBatch(
      'users',
      'create',
      [
        { username: 'same', firstName: 'Same' },
        { username: 'other', firstName: 'Other' },
      ],
      {
        between: () =>
          test.client.postUsers([
            { username: 'same', firstName: 'Same' },
            { username: 'other', firstName: 'Someone else' },
          ]),
      },
    );
    expect(creates.results).toMatchObject([
      { status: 'succeeded', id: userId('same') },
      { status: 'failed', errorCode: 'ADMIN_NOT_APPLIED', id: userId('other') },
    ]);
    expect(creates.results[1]!.error).toMatch(/holding other values in firstName/);
  });
});

describe('answer records are matched by key, never by position', () => {
  it('a record missing from the answer is not confirmed by the record at its position', async () => {
    const test = sandbox();
    await test.client.postUsers([{ username: 'a' }, { username: 'b' }]);
    const ids = { a: userId('a'), b: userId('b') };
    // a server that drops the first record of each call, unapplied, and answers for the rest
    const client = aroundWrites(test, (write, resource, method, records, signal) =>
      write(resource, method, records.slice(1), signal),
    );
    const { results } = await runBatch('users', 'delete', [{ username: 'a' }, { username: 'b' }], {
      client,
    });
    expect(results).toMatchObject([
      { key: 'a', status: 'failed', errorCode: 'ADMIN_NOT_APPLIED', id: ids.a },
      { key: 'b', status: 'succeeded', id: ids.b },
    ]);
    expect(results[0]!.error).toMatch(/still there/);
    expect(test.store.userByName('a')).toBeDefined();
  });

  it('an answer record that matches no request record confirms nothing', async () => {
    const test = sandbox();
    // the last record is dropped, and a stranger takes its place in the answer
    const client = aroundWrites(test, async (write, resource, method, records, signal) => {
      const answer = await write(resource, method, records.slice(0, -1), signal);
      return [...answer, { userId: 999, username: 'stranger' }];
    });
    const { results } = await runBatch('users', 'create', [{ username: 'a' }, { username: 'b' }], {
      client,
    });
    expect(results).toMatchObject([
      { key: 'a', status: 'succeeded', id: userId('a') },
      { key: 'b', status: 'failed', errorCode: 'ADMIN_NOT_APPLIED' },
    ]);
    expect(results[1]!.id).toBeUndefined();
  });

  it('an answer in another order than the request: each record gets its own id', async () => {
    const test = sandbox();
    const client = aroundWrites(test, async (write, ...args) => (await write(...args)).reverse());
    const names = ['a', 'b', 'c'];
    const creates = await runBatch(
      'users',
      'create',
      names.map((username) => ({ username })),
      { client },
    );
    const ids = names.map(userId);
    expect(new Set(ids).size).toBe(3);
    expect(creates.results.map((result) => [result.status, result.id])).toEqual(
      ids.map((id) => ['succeeded', id]),
    );
    const updates = await runBatch(
      'users',
      'upsert',
      names.map((username) => ({ username, firstName: username.toUpperCase() })),
      { client },
    );
    expect(updates.results.map((result) => [result.status, result.id])).toEqual(
      ids.map((id) => ['succeeded', id]),
    );
    const deletes = await runBatch(
      'users',
      'delete',
      names.map((username) => ({ username })),
      { client },
    );
    expect(deletes.results.map((result) => [result.status, result.id])).toEqual(
      ids.map((id) => ['succeeded', id]),
    );
  });

  it('a record applied but left out of the answer succeeds with the id read back', async () => {
    const test = sandbox();
    await test.client.postUsers([{ username: 'old', firstName: 'Old' }]);
    // a server that applies every record and answers for the first only
    const client = aroundWrites(test, async (write, ...args) => (await write(...args)).slice(0, 1));
    const { results, stats } = await runBatch(
      'users',
      'upsert',
      [{ username: 'new' }, { username: 'old', firstName: 'New' }, { username: 'newer' }],
      { client },
    );
    expect(results).toMatchObject([
      { status: 'succeeded', id: userId('new') },
      { status: 'succeeded', id: userId('old'), changed: ['firstName'] },
      { status: 'succeeded', id: userId('newer') },
    ]);
    expect(stats.reconcileReads).toBe(2);
  });
});

describe('fields the server dropped', () => {
  it('a field sent but missing from the answer record is a warning on the record', async () => {
    const test = sandbox();
    // the sandbox drops a "__proto__" key of substitutionMap; this server drops email too
    const client = aroundWrites(test, async (write, ...args) =>
      (await write(...args)).map(({ email: _email, ...record }) => record),
    );
    const substitutionMap = JSON.parse('{"__proto__": "x", "kept": "y"}') as Record<
      string,
      unknown
    >;
    const { results } = await runBatch(
      'users',
      'create',
      [
        { username: 'a', email: 'a@example.com', substitutionMap, firstName: 'A' },
        // position reads back "", primaryGroup never; unsent strings are left out of answers
        { username: 'b', position: 'vertical', primaryGroup: 1, lastName: 'B', email: '' },
      ],
      { client },
    );
    expect(results[0]).toMatchObject({ status: 'succeeded', id: userId('a') });
    expect(results[0]!.warnings).toEqual([
      'field "email" sent but not in the answer',
      'field "substitutionMap.__proto__" sent but not in the answer',
    ]);
    expect(results[1]).toMatchObject({ status: 'succeeded', id: userId('b') });
    expect(results[1]!.warnings).toBeUndefined();
  });

  it('fields the interface reads back otherwise are no warning: loadingDockType, empty workspaces', async () => {
    const test = sandbox();
    const groups = await runBatch('groups', 'create', [
      { name: 'g', loadingDockType: 10_000, description: 'd' },
    ]);
    expect(groups.results[0]!.warnings).toBeUndefined();
    const groupId = test.store.groupByName('g')?.id;
    const acls = await runBatch('acls', 'create', [{ groupId, name: 'read', workspaces: [] }]);
    expect(acls.results[0]).toMatchObject({ status: 'succeeded' });
    expect(acls.results[0]!.warnings).toBeUndefined();
  });
});
