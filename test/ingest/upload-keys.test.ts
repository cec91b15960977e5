/** The keys an upload claims in Redis while it is received: repeats and look-alikes. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookalikeKey } from '../../src/ingest/lookalike.js';
import { UploadKeys } from '../../src/results/import-runtime.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

describe('UploadKeys', () => {
  const prefix = freshPrefix('upload-keys');
  let redis: Redis;
  let keys: UploadKeys;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
    keys = new UploadKeys(redis, prefix);
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefix(testRedisUrl(), prefix);
  });

  const claim = (key: string, row: number) => ({ key, row, lookalike: lookalikeKey(key) });

  it('answers a repeat with its first row, and a look-alike with the other key and its row', async () => {
    const first = await keys.claimKeys(
      'imp1',
      [claim('alice', 1), claim('bob', 2), claim('Alice', 3), claim('alice', 4)],
      { refuseRepeats: true },
    );
    // a later batch of the same upload: the claims are in Redis, not in memory
    const second = await keys.claimKeys(
      'imp1',
      [claim('\u0430lice', 5), claim('ａｌｉｃｅ', 6), claim('BOB', 7), claim('carol', 8)],
      { refuseRepeats: true },
    );
    expect([...first, ...second]).toStrictEqual([
      { kind: 'first' },
      { kind: 'first' },
      { kind: 'lookalike', row: 1, key: 'alice' },
      { kind: 'repeat', row: 1 },
      { kind: 'lookalike', row: 1, key: 'alice' },
      { kind: 'lookalike', row: 1, key: 'alice' },
      { kind: 'lookalike', row: 2, key: 'bob' },
      { kind: 'first' },
    ]);
  });

  it('lets deletes repeat a key, still refusing a look-alike', async () => {
    const claims = await keys.claimKeys(
      'imp2',
      [claim('dupcase', 1), claim('dupcase', 2), claim('DUPCASE', 3)],
      { refuseRepeats: false },
    );
    expect(claims).toStrictEqual([
      { kind: 'first' },
      { kind: 'first' },
      { kind: 'lookalike', row: 1, key: 'dupcase' },
    ]);
  });

  it('claims keys that hold a NUL as well as any other', async () => {
    const claims = await keys.claimKeys(
      'imp4',
      [
        { key: 'a\0b', row: 1 },
        { key: 'a', row: 2 },
        { key: 'a\0b', row: 3 },
        { key: '', row: 4 },
      ],
      { refuseRepeats: true },
    );
    expect(claims).toStrictEqual([
      { kind: 'first' },
      { kind: 'first' },
      { kind: 'repeat', row: 1 },
      { kind: 'first' },
    ]);
    const more = await keys.claimKeys('imp4', [claim('b', 5), claim('', 6), claim('B', 7)], {
      refuseRepeats: true,
    });
    expect(more).toStrictEqual([
      { kind: 'first' },
      { kind: 'repeat', row: 4 },
      { kind: 'lookalike', row: 5, key: 'b' },
    ]);
  });

  it('checks no look-alike when none is given, and forgets everything on release', async () => {
    const plain = await keys.claimKeys(
      'imp3',
      [
        { key: 'alice', row: 1 },
        { key: 'Alice', row: 2 },
      ],
      { refuseRepeats: true },
    );
    expect(plain).toStrictEqual([{ kind: 'first' }, { kind: 'first' }]);
    await keys.claimKeys('imp1', [claim('x', 9)], { refuseRepeats: true });
    await keys.release('imp1');
    expect(
      await redis.exists(`${prefix}:import:{imp1}:keys`, `${prefix}:import:{imp1}:lookalikes`),
    ).toBe(0);
  });

  it('keeps a key with a form in the forms hash alone when asked: one write a key, repeats still refused', async () => {
    const claims = await keys.claimKeys(
      'imp5',
      [claim('dana', 1), claim('dana', 2), claim('Dana', 3), { key: '', row: 4 }, claim('eve', 5)],
      { refuseRepeats: true, keysToo: false },
    );
    expect(claims).toStrictEqual([
      { kind: 'first' },
      { kind: 'repeat', row: 1 },
      { kind: 'lookalike', row: 1, key: 'dana' },
      { kind: 'first' },
      { kind: 'first' },
    ]);
    // the forms name their keys; only the key without a form is in the keys hash
    expect(await redis.hgetall(`${prefix}:import:{imp5}:lookalikes`)).toStrictEqual({
      [lookalikeKey('dana')]: '1:dana',
      [lookalikeKey('eve')]: '5:eve',
    });
    expect(await redis.hkeys(`${prefix}:import:{imp5}:keys`)).toStrictEqual(['']);
  });
});
