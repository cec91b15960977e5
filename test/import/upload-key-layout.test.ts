/**
 * Where an upload's keys wait for its preparation: an import that compares look-alikes keeps
 * each key with its form alone; a sync keeps them in the keys hash too (an earlier worker reads
 * that one alone); an import that compares none keeps the keys hash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookalikeKey } from '../../src/ingest/lookalike.js';
import type { ImportOptions } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

describe("an upload's keys before its preparation", () => {
  let pipeline: Pipeline;
  beforeAll(async () => {
    pipeline = await startPipeline({ workers: false });
  });
  afterAll(async () => {
    await pipeline?.close();
  });

  const layout = async (
    options: Partial<ImportOptions> & Pick<ImportOptions, 'resource' | 'mode'>,
  ): Promise<{ keys: string[]; forms: Record<string, string> }> => {
    const info = await pipeline.submit(csv(['username'], [['kim'], ['lou']]), options);
    const { store, redis } = pipeline.context;
    return {
      keys: (await redis.hkeys(store.uploadKeysKey(info.id))).sort(),
      forms: await redis.hgetall(store.uploadLookalikesKey(info.id)),
    };
  };
  const forms = { [lookalikeKey('kim')]: '1:kim', [lookalikeKey('lou')]: '2:lou' };

  it('create: each key with its look-alike form alone', async () => {
    expect(await layout({ resource: 'users', mode: 'create' })).toEqual({ keys: [], forms });
  });

  it('sync: with its form and in the keys hash', async () => {
    expect(
      await layout({ resource: 'users', mode: 'sync', sync: { missing: 'lock', maxDeletes: '0' } }),
    ).toEqual({ keys: ['kim', 'lou'], forms });
  });

  it('update (compares no look-alike of the server): in the keys hash, forms still claimed', async () => {
    expect(await layout({ resource: 'users', mode: 'update' })).toEqual({
      keys: ['kim', 'lou'],
      forms,
    });
  });
});
