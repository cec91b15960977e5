import { afterEach, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { seededRandom } from '../helpers/random.js';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});

function users(prefix: string, count: number): string {
  return csv(
    ['username', 'email'],
    Array.from({ length: count }, (_, index) => [
      `${prefix}${index + 1}`,
      `${prefix}${index + 1}@example.com`,
    ]),
  );
}

/**
 * A server failing this often may, by chance, fail half the calls of a short window and trip
 * the circuit breaker. That pause is right, but its default 15 s cool-down would make these
 * tests slow and their duration random; a short cool-down keeps the pause and bounds it.
 */
const flakyEnv = { PORTER_MAX_ATTEMPTS: '12', PORTER_BREAKER_COOLDOWN_MS: '100' };

describe('a flaky admin server (fail-rate 0.1, drop-rate 0.05)', () => {
  it.each(['create', 'upsert'] as const)(
    '%s of 5,000 users: exactly 5,000 users, no duplicate, every result succeeded',
    async (mode) => {
      pipeline = await startPipeline({
        sandbox: {
          faults: { failRate: 0.1, dropRate: 0.05 },
          random: seededRandom(mode === 'create' ? 7 : 11),
        },
        env: flakyEnv,
        workerOptions: { concurrency: 8 },
      });
      const { info, results } = await pipeline.run(users('flaky.', 5_000), {
        resource: 'users',
        mode,
      });
      const faults = pipeline.sandbox.store.stats.faults;
      console.log(`${mode}: ${faults.failed} refused (503), ${faults.dropped} dropped unanswered`);
      expect(faults.failed).toBeGreaterThan(0);
      expect(faults.dropped).toBeGreaterThan(0);
      expect(info.state).toBe('completed');
      expect(info.counts).toEqual({
        succeeded: 5_000,
        failed: 0,
        skipped: 0,
        unprocessed: 0,
        planned: 0,
      });
      expect(
        results.every((result) => result.status === 'succeeded' && result.id !== undefined),
      ).toBe(true);
      // a record that landed under a dropped answer was looked up, never sent again
      expect(pipeline.sandbox.store.stats.refusals.ALREADY_EXISTS ?? 0).toBe(0);
      const created = pipeline.sandbox.store.users();
      expect(created).toHaveLength(5_000);
      expect(new Set(created.map((user) => user.username)).size).toBe(5_000);
      // every reported id is the id the sandbox holds for that username
      const idOf = new Map(created.map((user) => [user.username, user.userId]));
      for (const result of results) expect(result.id).toBe(idOf.get(result.key!));
    },
  );

  it('deletes under drops are idempotent: every present user is removed and reported succeeded', async () => {
    pipeline = await startPipeline({ env: flakyEnv, sandbox: { random: seededRandom(5) } });
    await pipeline.run(users('gone.', 1_000), { resource: 'users', mode: 'create' });
    pipeline.sandbox.setFaults({ dropRate: 0.2, failRate: 0.1 });
    const { info } = await pipeline.run(users('gone.', 1_000), {
      resource: 'users',
      mode: 'delete',
    });
    expect(pipeline.sandbox.store.stats.faults.dropped).toBeGreaterThan(0);
    expect(info.counts).toEqual({
      succeeded: 1_000,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    expect(
      pipeline.sandbox.store.users().filter((user) => user.username?.startsWith('gone.')),
    ).toEqual([]);
  });

  it('a server that keeps failing: after the attempts, records are unprocessed with the last error', async () => {
    pipeline = await startPipeline({
      sandbox: { faults: { failRate: 1 } },
      env: { PORTER_MAX_ATTEMPTS: '3', PORTER_BREAKER_MIN_CALLS: '1000000' },
    });
    // look-alikes allowed: the import goes to its batches without reading every key first
    const { info, results } = await pipeline.run(users('down.', 20), {
      resource: 'users',
      mode: 'create',
      allowLookalike: true,
    });
    expect(info.state).toBe('completed_with_errors');
    expect(info.counts.unprocessed).toBe(20);
    expect(results[0]).toMatchObject({
      status: 'unprocessed',
      errorCode: 'ADMIN_UNAVAILABLE',
      error: expect.stringMatching(/503/),
    });
    expect(pipeline.sandbox.store.users()).toEqual([]);
  });
});

describe('a partial-batch server', () => {
  it('records before a bad one are applied by the server, yet each record is reported once and correctly', async () => {
    pipeline = await startPipeline({ sandbox: { faults: { batchFailure: 'partial' } } });
    const rows = Array.from({ length: 300 }, (_, index) => [
      `partial.${index + 1}`,
      index % 50 === 49 ? '987654' : '',
    ]);
    const { info, results } = await pipeline.run(csv(['username', 'groups'], rows), {
      resource: 'users',
      mode: 'create',
    });
    expect(info.counts).toEqual({
      succeeded: 294,
      failed: 6,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    expect(
      results.filter((result) => result.status === 'failed').map((result) => result.row),
    ).toEqual([50, 100, 150, 200, 250, 300]);
    expect(pipeline.sandbox.store.users()).toHaveLength(294);
  });
});

describe('a server that answers 200 with only the records it applied (--batch-failure omit)', () => {
  it('records left out of the answer are failed ADMIN_NOT_APPLIED, never reported succeeded', async () => {
    pipeline = await startPipeline({ sandbox: { faults: { batchFailure: 'omit' } } });
    const rows = Array.from({ length: 300 }, (_, index) => [
      `omit.${index + 1}`,
      index % 50 === 49 ? '987654' : '',
    ]);
    const { info, results } = await pipeline.run(csv(['username', 'groups'], rows), {
      resource: 'users',
      mode: 'create',
    });
    expect(info.state).toBe('completed_with_errors');
    expect(info.counts).toEqual({
      succeeded: 294,
      failed: 6,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    const failed = results.filter((result) => result.status === 'failed');
    expect(failed.map((result) => result.row)).toEqual([50, 100, 150, 200, 250, 300]);
    for (const result of failed) expect(result.errorCode).toBe('ADMIN_NOT_APPLIED');
    const store = pipeline.sandbox.store;
    expect(store.users()).toHaveLength(294);
    for (const result of results.filter((each) => each.status === 'succeeded')) {
      expect(result.id).toBe(store.userByName(String(result.key))?.userId);
    }
  });
});
