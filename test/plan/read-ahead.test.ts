/**
 * Records whose lookups a snapshot's batch read ahead are planned at once, without a promise;
 * the plan is the one the same batch gets when every record waits for its reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { ImportMode, StagedRecord } from '../../src/model/import.js';
import type { DirectoryView } from '../../src/plan/directory-view.js';
import { planBatch } from '../../src/plan/plan-batch.js';
import { encodeCompact } from '../../src/snapshot/record-codec.js';
import { snapshotKeys } from '../../src/snapshot/snapshot-keys.js';
import { SnapshotLookup } from '../../src/snapshot/snapshot-lookup.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const url = testRedisUrl();
const prefix = freshPrefix('read-ahead');
const keys = snapshotKeys(prefix, 'imp_ra');
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(url);
  await redis.hset(
    keys.records,
    'ada',
    encodeCompact('users', { userId: 1, username: 'ada', email: 'ada@x', groups: [10] }),
    'bob',
    encodeCompact('users', { userId: 2, username: 'bob', type: 'Global Administrator' }),
  );
  await redis.hset(keys.groupIds, 'Sales', '10', 'Ops', '11', '12', '13');
  await redis.hset(keys.groupNames, '10', 'Sales', '11', 'Ops', '13', '12');
  await redis.hset(keys.lookalikes, 'Cleo', 'cleo');
});
afterAll(async () => {
  redis.disconnect();
  await deletePrefix(url, prefix);
});

/** The server, for what the snapshot does not hold: a group created since, by name. */
const server = {
  reads: 0,
  user: () => Promise.resolve(undefined),
  userById: () => Promise.resolve(undefined),
  group: (name: string) => Promise.resolve(name === 'New' ? { id: 20, name: 'New' } : undefined),
  groupById: (id: number) => Promise.resolve(id === 12 ? { id: 12, name: 'Twelve' } : undefined),
  aclById: () => Promise.resolve(undefined),
  aclByName: () => Promise.resolve(undefined),
} satisfies DirectoryView;

function staged(records: Record<string, unknown>[]): StagedRecord[] {
  return records.map((record, index) => ({
    row: index + 1,
    line: index + 2,
    input: {},
    record,
  }));
}

const RECORDS = staged([
  { username: 'ada', email: 'ada@y', groups: ['Sales', 'Ops'] },
  { username: 'ada', email: 'twice' },
  { username: 'bob', firstName: 'Bob' },
  { username: 'cleo' },
  { username: 'Cleo', userId: 77 },
  { username: 'dan', groups: ['New'] },
  { username: 'eve', groups: ['Nowhere'] },
  { username: 'fay', groups: ['12'] },
  { username: 'gus', groups: ['#11', 'name:Sales', 10] },
  { username: 'hal', type: 'Global Administrator' },
]);

/** Usernames planning asked the lookup for, waiting for the answer. */
const waitedFor: string[] = [];

async function plan(mode: ImportMode, readAhead: boolean) {
  const lookup = new SnapshotLookup({ redis, keys, resource: 'users', server });
  if (!readAhead) Object.assign(lookup, { readAhead: undefined });
  const user = lookup.user.bind(lookup);
  lookup.user = (username) => {
    waitedFor.push(username);
    return user(username);
  };
  waitedFor.length = 0;
  return planBatch(RECORDS, {
    resource: 'users',
    mode,
    allowAdmin: false,
    lookup,
    sentBefore: new Set([4]),
  });
}

describe('planning from what a snapshot read ahead', () => {
  it.each(['create', 'upsert', 'update', 'delete'] as const)(
    'plans a %s batch as the records waiting for their reads do',
    async (mode) => {
      const now = await plan(mode, true);
      expect(now).toEqual(await plan(mode, false));
      expect(now.ops.length + now.decided.length).toBe(RECORDS.length);
    },
  );

  it('asks the server for a name the snapshot does not hold, and refuses an unknown one', async () => {
    const { ops, decided } = await plan('create', true);
    // only dan's record is read waiting: his group was created since the snapshot (eve's
    // group and fay's number, a name and an id, wait too, and are refused before that)
    expect(waitedFor).toEqual(['dan']);
    expect(decided.find((result) => result.key === 'fay')).toMatchObject({
      errorCode: 'PORTER_GROUP_AMBIGUOUS',
    });
    expect(ops.find((op) => op.key === 'dan')?.payload.groups).toEqual([20]);
    expect(decided.find((result) => result.key === 'eve')).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_GROUP_UNRESOLVED',
    });
    expect(decided.find((result) => result.key === 'Cleo')).toMatchObject({
      errorCode: 'PORTER_KEY_LOOKALIKE',
    });
  });
});
