/**
 * A preparation that ran to its end and is run again (queueing its batches or finishing its
 * job failed: Redis away, a queue slot in migration) finds it was done: the same batches,
 * nothing read again, instead of refusing the import because its upload's keys are gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../src/admin/client.js';
import { prepareJobId } from '../../src/queue/import-queue.js';
import { prepareImport } from '../../src/snapshot/prepare-import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let client: AdminClient;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  client = pipeline.context.createAdminClient();
});
afterAll(async () => {
  await client?.close();
  await pipeline?.close();
});

describe('a preparation run again', () => {
  it.each(['snapshot', 'each'] as const)(
    'lookup %s: the same batches, the upload refused by nobody',
    async (lookup) => {
      const { context, sandbox } = pipeline;
      const rows = Array.from({ length: 9 }, (_, index) => [`again.${lookup}.${index}`, 'Oslo']);
      const info = await pipeline.submit(csv(['username', 'city'], rows), {
        resource: 'users',
        mode: 'create',
        lookup,
        batchSize: 4,
      });
      await context.importQueue.remove(prepareJobId(info.id));
      const prepare = () =>
        prepareImport(info.id, {
          redis: context.redis,
          store: context.store,
          client,
          retry: context.retryPolicy,
          target: 'default',
        });
      const first = await prepare();
      expect(first.map((ref) => ref.count)).toEqual([4, 4, 1]);
      const reads = sandbox.store.stats.requests.GET;
      await expect(prepare()).resolves.toEqual(first);
      expect(sandbox.store.stats.requests.GET).toBe(reads);
    },
  );
});
