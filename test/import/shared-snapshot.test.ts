/**
 * Imports of one target prepared together read its directory once: a real sandbox counts the
 * reads, each import's snapshot in Redis keeps only what its own upload names, the batches run
 * on those snapshots, and a settled import's snapshot is gone from Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../src/admin/client.js';
import { enqueueBatches, prepareJobId } from '../../src/queue/import-queue.js';
import { prepareImport } from '../../src/snapshot/prepare-import.js';
import { SharedSnapshotReads } from '../../src/snapshot/shared-reads.js';
import { snapshotKeyList, snapshotKeys } from '../../src/snapshot/snapshot-keys.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

describe('imports of one target prepared together', () => {
  let pipeline: Pipeline;
  let client: AdminClient;
  beforeAll(async () => {
    pipeline = await startPipeline({ workers: false });
    client = pipeline.context.createAdminClient();
    await client.postGroups([{ name: 'shared.Staff' }]);
    await client.postUsers(
      Array.from({ length: 30 }, (_, index) => ({ username: `shared.u${index}`, city: 'Paris' })),
    );
  });
  afterAll(async () => {
    await client?.close();
    await pipeline?.close();
  });

  it('share one read of the directory, each keeping only its own records', async () => {
    const { context, sandbox } = pipeline;
    // three uploads: ten present users each, and one new user each
    const uploads = [0, 1, 2].map((slice) =>
      csv(
        ['username', 'city', 'groups'],
        [
          ...Array.from({ length: 10 }, (_, index) => [
            `shared.u${slice * 10 + index}`,
            `Rome${slice}`,
            'shared.Staff',
          ]),
          [`shared.new${slice}`, 'Oslo', 'shared.Staff'],
        ],
      ),
    );
    const submitted = [];
    for (const text of uploads) {
      submitted.push(
        await pipeline.submit(text, {
          resource: 'users',
          mode: 'upsert',
          lookup: 'snapshot',
          batchSize: 4,
        }),
      );
    }
    // the test prepares them itself, at the same time, as one worker would
    for (const info of submitted) await context.importQueue.remove(prepareJobId(info.id));
    const reads = new SharedSnapshotReads(1000);
    const before = sandbox.store.stats.requests.GET;
    const refs = await Promise.all(
      submitted.map((info) =>
        prepareImport(info.id, {
          redis: context.redis,
          store: context.store,
          client,
          retry: context.retryPolicy,
          target: 'default',
          snapshotReads: reads,
        }),
      ),
    );
    // one read of the users and one of the groups (their names), for the three imports
    expect(sandbox.store.stats.requests.GET - before).toBe(2);
    for (const [slice, info] of submitted.entries()) {
      const kept = await context.redis.hkeys(
        snapshotKeys(context.env.PORTER_PREFIX, info.id).records,
      );
      expect(kept.sort()).toEqual(
        Array.from({ length: 10 }, (_, index) => `shared.u${slice * 10 + index}`).sort(),
      );
      const stored = await context.store.get(info.id);
      expect(stored?.lookup).toMatchObject({ mode: 'snapshot', kept: 10, sharedBy: 3 });
      expect(stored?.lookup?.records).toBeGreaterThanOrEqual(30);
    }

    for (const batch of refs) await enqueueBatches(context.importQueue, batch);
    const workers = pipeline.startWorkers({ concurrency: 4 });
    try {
      for (const [slice, info] of submitted.entries()) {
        const done = await pipeline.waitFinal(info.id);
        expect(done.counts).toMatchObject({ succeeded: 11, failed: 0, unprocessed: 0 });
        const results = await pipeline.results(info.id);
        expect(results.filter((one) => one.action === 'update')).toHaveLength(10);
        expect(results.filter((one) => one.action === 'create')).toHaveLength(1);
        expect(sandbox.store.userByName(`shared.u${slice * 10}`)?.city).toBe(`Rome${slice}`);
        // settled: nothing reads its snapshot any more, and Redis no longer holds it
        const keys = snapshotKeyList(snapshotKeys(context.env.PORTER_PREFIX, info.id));
        expect(await context.redis.exists(...keys)).toBe(0);
      }
    } finally {
      await workers.close();
    }
  });
});
