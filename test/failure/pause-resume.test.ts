import { afterEach, describe, expect, it } from 'vitest';
import { cancelImport, resumeImport } from '../../src/app/imports.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});

const breakerEnv = (cooldownMs: number): Record<string, string> => ({
  PORTER_MAX_ATTEMPTS: '50',
  PORTER_BREAKER_MIN_CALLS: '5',
  PORTER_BREAKER_THRESHOLD: '0.5',
  PORTER_BREAKER_COOLDOWN_MS: String(cooldownMs),
});

function totalRequests(p: Pipeline): number {
  const { GET, PUT, POST, DELETE } = p.sandbox.store.stats.requests;
  return GET + PUT + POST + DELETE;
}

const rows = (prefix: string): string =>
  csv(
    ['username'],
    Array.from({ length: 500 }, (_, index) => [`${prefix}${index + 1}`]),
  );

async function pausedImport(p: Pipeline, prefix: string): Promise<string> {
  const submitted = await p.submit(rows(prefix), {
    resource: 'users',
    mode: 'create',
    batchSize: 50,
  });
  const paused = await waitFor(
    async () => {
      const info = await p.context.store.get(submitted.id);
      return info?.state === 'paused' ? info : undefined;
    },
    { what: 'the import to pause' },
  );
  expect(paused.reason).toMatch(/the admin server failed \d+ of \d+ calls/);
  return submitted.id;
}

describe('a server that fails most calls', () => {
  it('pauses the import (reason recorded), probes after the cool-down, and resumes when the server answers', async () => {
    pipeline = await startPipeline({ sandbox: { faults: { failRate: 1 } }, env: breakerEnv(300) });
    const id = await pausedImport(pipeline, 'breaker.');
    const requestsWhilePaused = totalRequests(pipeline);
    // while paused, only probes reach the server: one batch per cool-down
    await waitFor(() => (totalRequests(pipeline!) > requestsWhilePaused ? true : undefined), {
      what: 'a probe',
    });
    expect((await pipeline.context.store.get(id))?.state).toBe('paused');
    pipeline.sandbox.setFaults({ failRate: 0 });
    const info = await pipeline.waitFinal(id);
    expect(info.state).toBe('completed');
    expect(info.counts).toEqual({
      succeeded: 500,
      failed: 0,
      skipped: 0,
      unprocessed: 0,
      planned: 0,
    });
    expect(pipeline.sandbox.store.users()).toHaveLength(500);
  });

  it('porter resume runs a paused import at once', async () => {
    pipeline = await startPipeline({
      sandbox: { faults: { failRate: 1 } },
      env: breakerEnv(600_000),
    });
    const id = await pausedImport(pipeline, 'manual.');
    // the cool-down starts with the pause: no batch may probe before it ends
    expect(await pipeline.context.health.takeProbe(id, 600_000)).toBe(false);
    pipeline.sandbox.setFaults({ failRate: 0 });
    const resumed = await resumeImport(pipeline.context, id);
    // paused before its first batch (its server could not be read), it is queued again
    expect(resumed.state).toMatch(/^(queued|running)$/);
    const info = await pipeline.waitFinal(id);
    expect(info.counts.succeeded).toBe(500);
    await expect(resumeImport(pipeline.context, id)).rejects.toMatchObject({
      code: 'PORTER_CONFLICT',
    });
  });

  it('porter cancel ends a paused import: its records are reported unprocessed, none sent', async () => {
    pipeline = await startPipeline({
      sandbox: { faults: { failRate: 1 } },
      env: breakerEnv(600_000),
    });
    const id = await pausedImport(pipeline, 'cancelpaused.');
    await cancelImport(pipeline.context, id);
    const info = await pipeline.waitFinal(id);
    expect(info.state).toBe('cancelled');
    expect(info.counts.unprocessed).toBe(500);
    expect(pipeline.sandbox.store.users()).toHaveLength(0);
    expect(await pipeline.context.importQueue.getJobCounts('delayed', 'waiting', 'active')).toEqual(
      {
        delayed: 0,
        waiting: 0,
        active: 0,
      },
    );
  });
});
