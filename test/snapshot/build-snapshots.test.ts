/**
 * One read of the directory for several imports (buildSnapshots), against a real sandbox and
 * Redis: each keeps what its own upload names, in its own keys; one that left the read keeps
 * what it had and gets nothing more written.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { lookalikeKey } from '../../src/ingest/lookalike.js';
import { buildSnapshots, type SnapshotParticipant } from '../../src/snapshot/build-snapshot.js';
import { snapshotKeys } from '../../src/snapshot/snapshot-keys.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

describe('buildSnapshots', () => {
  const prefix = freshPrefix('build-snapshots');
  let redis: Redis;
  let sandbox: RunningSandbox;
  let client: AdminClient;
  beforeAll(async () => {
    redis = new Redis(testRedisUrl());
    sandbox = await startSandbox({ port: 0 });
    client = new AdminClient({ baseUrl: sandbox.url });
    await client.postUsers(
      ['ann', 'ben', 'cat', 'Dan'].map((username) => ({ username, city: 'Paris' })),
    );
  });
  afterAll(async () => {
    await client?.close();
    await sandbox?.close();
    redis?.disconnect();
    await deletePrefix(testRedisUrl(), prefix);
  });

  const participant = (id: string, wanted?: () => boolean): SnapshotParticipant => ({
    keys: snapshotKeys(prefix, id),
    uploadKeys: `${prefix}:import:{${id}}:keys`,
    uploadLookalikes: `${prefix}:import:{${id}}:lookalikes`,
    needs: { groupIndex: false, userIndex: false },
    ttlSeconds: 600,
    wanted,
  });

  it('keeps for each import what its upload names, from its keys or its forms', async () => {
    const a = participant('a');
    const b = participant('b');
    // a's keys in the forms' hash alone ("row:key"), b's in the keys hash; b also names "dan",
    // which looks like the server's "Dan"
    await redis.hset(
      a.uploadLookalikes!,
      lookalikeKey('ann'),
      '1:ann',
      lookalikeKey('zed'),
      '2:zed',
    );
    await redis.hset(b.uploadKeys, 'ben', '1', 'cat', '2');
    await redis.hset(b.uploadLookalikes!, lookalikeKey('dan'), '3:dan');
    const [ofA, ofB] = await buildSnapshots({ redis, client, resource: 'users' }, [a, b]);
    expect(ofA).toMatchObject({ records: 4, kept: 1, sharedBy: 2 });
    expect(ofB).toMatchObject({ records: 4, kept: 2, sharedBy: 2 });
    expect(await redis.hkeys(a.keys.records)).toEqual(['ann']);
    expect((await redis.hkeys(b.keys.records)).sort()).toEqual(['ben', 'cat']);
    expect(await redis.hgetall(b.keys.lookalikes)).toEqual({ dan: 'Dan' });
    expect(await redis.exists(a.keys.lookalikes)).toBe(0);
    expect(await redis.ttl(b.keys.records)).toBeGreaterThan(0);
  });

  it('an import that left the read keeps what it had: nothing is removed or written for it', async () => {
    const stays = participant('c');
    const left = participant('d', () => false);
    await redis.hset(stays.uploadKeys, 'ann', '1');
    await redis.hset(left.uploadKeys, 'ben', '1');
    // what another worker that took d's preparation over has written meanwhile
    await redis.hset(left.keys.records, 'ben', 'rebuilt elsewhere');
    const [ofStays] = await buildSnapshots({ redis, client, resource: 'users' }, [stays, left]);
    expect(ofStays).toMatchObject({ kept: 1 });
    expect(await redis.hgetall(left.keys.records)).toEqual({ ben: 'rebuilt elsewhere' });
    // its keys still expire
    expect(await redis.ttl(left.keys.records)).toBeGreaterThan(0);
  });
});
