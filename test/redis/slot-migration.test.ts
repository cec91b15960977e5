/**
 * A slow reshard on a real 3-master Cluster: the slot holding an import's keys is put in
 * migration and its keys moved one by one while the import runs (`TRYAGAIN`, `ASK`, then
 * `MOVED`). Batches wait and run again: every record ends with exactly one result, succeeded,
 * none is said "not sent", and nothing is created twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKeyBase, queuePrefix } from '../../src/redis/key-tags.js';
import { IMPORT_QUEUE } from '../../src/queue/import-queue.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-topology.js';
import { beginSlotMove, slotOf } from '../helpers/slot-migration.js';

let cluster: RedisCluster;
let pipeline: Pipeline;

beforeAll(async () => {
  cluster = await startRedisCluster();
  pipeline = await startPipeline({
    env: { REDIS_CLUSTER_NODES: cluster.nodes },
    sandbox: { faults: { latencyMs: 20 } },
  });
}, 60_000);
afterAll(async () => {
  await pipeline?.close();
  await cluster?.stop();
});

/**
 * Runs an import of `total` users while the slot of `slotKey` (or, with `queue`, of the import
 * queue's keys) moves key by key, `keysPerStep` keys each time the import met the migration
 * again, until none is left on the source. Then checks every record.
 */
async function importDuringReshard(
  total: number,
  tag: string,
  slotKeyOf: (importId: string) => string,
  keysPerStep: number,
  /** Records on the server before the slot starts to move. @defaultValue 0 */
  startAt = 0,
): Promise<void> {
  const tryAgainsPerKey = 10;
  const rows = Array.from({ length: total }, (_, index) => [`${tag}.${index}`, `R ${index}`]);
  const store = pipeline.sandbox.store;
  const before = store.counts().users;
  const createdBefore = store.stats.applied.users.created;
  const submitted = await pipeline.submit(csv(['username', 'lastName'], rows), {
    resource: 'users',
    mode: 'upsert',
    batchSize: 10,
  });
  await waitFor(
    () => (pipeline.sandbox.store.counts().users - before >= startAt ? true : undefined),
    { timeoutMs: 60_000, what: 'the import under way' },
  );
  const slot = await slotOf(cluster.ports[0]!, slotKeyOf(submitted.id));
  const move = await beginSlotMove(cluster.ports, slot);
  // a key moves each time the import has met the migration again (TRYAGAIN answers): the slot
  // stays in migration, its keys split between two masters, for as long as its keys take
  let moved = 0;
  let met = 0;
  const allSent = (): boolean => pipeline.sandbox.store.counts().users - before >= total;
  while (!allSent()) {
    const seen = met;
    met = await waitFor(
      async () => {
        const now = await move.tryAgains();
        return now >= seen + tryAgainsPerKey || allSent() ? now : undefined;
      },
      {
        timeoutMs: 60_000,
        what: 'the import to meet the migration again (or were its batches given up?)',
      },
    );
    const step = await move.moveKeys(keysPerStep);
    if (step === 0) break;
    moved += step;
  }
  expect(moved).toBeGreaterThan(0);
  await move.finish();
  const info = await pipeline.waitFinal(submitted.id, 120_000);
  const results = await pipeline.results(submitted.id);
  const notSent = results.filter((result) => /not sent/.test(result.error ?? ''));
  expect({ notSent: notSent.length, first: notSent[0]?.error }).toEqual({ notSent: 0 });
  expect(info.counts).toMatchObject({ succeeded: total, failed: 0, unprocessed: 0 });
  expect(info.state).toBe('completed');
  expect(new Set(results.map((result) => result.row)).size).toBe(total);
  expect(rows.every(([username]) => store.userByName(username!) !== undefined)).toBe(true);
  // nothing created twice
  expect(store.counts().users - before).toBe(total);
  expect(store.stats.applied.users.created - createdBefore).toBe(total);
}

describe('a slot in migration while an import runs', () => {
  it('the import\'s slot: every record once, succeeded; none said "not sent"; nothing created twice', async () => {
    const { PORTER_PREFIX: prefix } = pipeline.context.env;
    await importDuringReshard(1_500, 'reshard', (id) => importKeyBase(prefix, id), 1);
  }, 240_000);

  it("the import queue's slot, its batches queued: every record once, succeeded", async () => {
    const { PORTER_PREFIX: prefix } = pipeline.context.env;
    await importDuringReshard(
      1_000,
      'queue-reshard',
      () => queuePrefix(prefix, IMPORT_QUEUE),
      5,
      100,
    );
  }, 240_000);
});
