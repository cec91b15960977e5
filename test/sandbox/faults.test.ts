/** Fault injection: each flag, made deterministic through the injectable `random` and clock. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AdminNoAnswerError, classifyFailure } from '../../src/admin/errors.js';
import { isPorterError } from '../../src/errors/porter-error.js';
import { adminFailure, startTestSandbox, withSandbox } from '../helpers/sandbox.js';

/** A `random` that replays the given values, then repeats the last one. */
function replay(...values: number[]): () => number {
  let next = 0;
  return () => values[Math.min(next++, values.length - 1)] ?? 0;
}

describe('faults', () => {
  it('--fail-rate: 503 UNAVAILABLE before anything is applied; the client calls it transient', async () => {
    await withSandbox(
      { faults: { failRate: 0.5 }, random: replay(0.2, 0.7) },
      async ({ client, store }) => {
        const error = await adminFailure(() => client.postUsers([{ username: 'ada' }]));
        expect(error).toMatchObject({
          status: 503,
          errorcode: 'UNAVAILABLE',
          code: 'ADMIN_UNAVAILABLE',
        });
        expect(classifyFailure(error)).toBe('transient');
        expect(store.counts().users).toBe(0);
        expect(await client.postUsers([{ username: 'ada' }])).toHaveLength(1);
        expect(store.stats.faults.failed).toBe(1);
      },
    );
  });

  it('--drop-rate: the request is applied, then the connection is destroyed unanswered (AdminNoAnswerError)', async () => {
    await withSandbox({ faults: { dropRate: 1 }, random: () => 0 }, async ({ client, store }) => {
      const error = await adminFailure(() =>
        client.postUsers([{ username: 'ada' }, { username: 'alan' }]),
      );
      expect(error).toBeInstanceOf(AdminNoAnswerError);
      expect(classifyFailure(error)).toBe('ambiguous');
      expect(store.userByName('ada')).toMatchObject({ userId: 1 });
      expect(store.userByName('alan')).toMatchObject({ userId: 2 });
      expect(store.stats.faults.dropped).toBe(1);
    });
  });

  it('--batch-failure partial: records before the failing one are applied and saved, then the error answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'porter-sandbox-'));
    const dataFile = join(dir, 'state.ndjson');
    try {
      const first = await startTestSandbox({ dataFile, faults: { batchFailure: 'partial' } });
      await first.client.postUsers([{ username: 'taken' }]);
      const error = await adminFailure(() =>
        first.client.postUsers([
          { username: 'a' },
          { username: 'b' },
          { username: 'taken' },
          { username: 'c' },
        ]),
      );
      expect(error).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 2 });
      expect(first.store.users().map((user) => user.username)).toEqual(['taken', 'a', 'b']);
      await first.close();
      const second = await startTestSandbox({ dataFile });
      expect(second.store.users().map((user) => user.username)).toEqual(['taken', 'a', 'b']);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--batch-failure atomic (the default): nothing of a failing request is applied', async () => {
    await withSandbox({}, async ({ client, store, sandbox }) => {
      expect(sandbox.faults().batchFailure).toBe('atomic');
      await client.postUsers([{ username: 'taken' }]);
      await adminFailure(() => client.postUsers([{ username: 'a' }, { username: 'taken' }]));
      expect(store.counts().users).toBe(1);
    });
  });

  it('--rate-limit: past N requests per second, 429 RATE_LIMITED with Retry-After (retryAfterMs)', async () => {
    let clock = 10_000;
    await withSandbox({ faults: { rateLimit: 2 }, now: () => clock }, async ({ client, store }) => {
      await client.listUsers();
      clock += 400;
      await client.postUsers([{ username: 'ada' }]);
      const error = await adminFailure(() => client.postUsers([{ username: 'alan' }]));
      expect(error).toMatchObject({ status: 429, errorcode: 'RATE_LIMITED', retryAfterMs: 1000 });
      expect(classifyFailure(error)).toBe('transient');
      expect(store.userByName('alan')).toBeUndefined();
      clock += 600; // the first request leaves the one-second window
      expect(await client.postUsers([{ username: 'alan' }])).toHaveLength(1);
      expect(store.stats.faults.rateLimited).toBe(1);
    });
  });

  it('--max-records: more records in one request is 413 TOO_MANY_RECORDS, nothing applied', async () => {
    await withSandbox({ faults: { maxRecords: 2 } }, async ({ client, store }) => {
      expect(await client.postUsers([{ username: 'a' }, { username: 'b' }])).toHaveLength(2);
      const error = await adminFailure(() =>
        client.postUsers([{ username: 'c' }, { username: 'd' }, { username: 'e' }]),
      );
      expect(error).toMatchObject({ status: 413, errorcode: 'TOO_MANY_RECORDS' });
      expect(error.index).toBeUndefined();
      expect(classifyFailure(error)).toBe('permanent');
      expect(store.counts().users).toBe(2);
    });
  });

  it('--latency: every answer waits at least that long', async () => {
    await withSandbox({ faults: { latencyMs: 60 } }, async ({ client }) => {
      const started = performance.now();
      await client.listUsers();
      expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    });
  });

  it('setFaults changes faults at run time, and refuses bad values', async () => {
    await withSandbox({ random: () => 0 }, async ({ client, sandbox, store }) => {
      await client.postUsers([{ username: 'a' }]);
      sandbox.setFaults({ failRate: 1 });
      await adminFailure(() => client.postUsers([{ username: 'b' }]));
      sandbox.setFaults({ failRate: 0, maxRecords: 1 });
      expect(sandbox.faults()).toMatchObject({
        failRate: 0,
        maxRecords: 1,
        batchFailure: 'atomic',
      });
      expect(await client.postUsers([{ username: 'b' }])).toHaveLength(1);
      expect(store.counts().users).toBe(2);
      let refused: unknown;
      try {
        sandbox.setFaults({ dropRate: 2 });
      } catch (error) {
        refused = error;
      }
      expect(isPorterError(refused) && refused.code).toBe('PORTER_USAGE');
    });
  });

  it('draws from random only for rates above 0: failRate first, then dropRate', async () => {
    const draws: number[] = [];
    const random = (): number => {
      draws.push(draws.length);
      return 0.9;
    };
    await withSandbox({ faults: { dropRate: 0.5 }, random }, async ({ client, sandbox }) => {
      await client.listUsers();
      expect(draws).toHaveLength(1);
      sandbox.setFaults({ failRate: 0.5 });
      await client.listUsers();
      expect(draws).toHaveLength(3);
    });
  });
});
