import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleDiffSource, diffDirectories, liveDiffSource } from '../../src/app/diff.js';
import { requireMigration, startMigration } from '../../src/app/migrations.js';
import type { MigrationInfo } from '../../src/migrate/migration-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { bundleText, seedSource } from './migrate-fixture.js';

let source: RunningSandbox;
let pipeline: Pipeline;
let dir: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  source = await startSandbox({ port: 0 });
  // the workers are separate processes; a little latency keeps batches in flight when they die
  pipeline = await startPipeline({ workers: false, sandbox: { faults: { latencyMs: 10 } } });
  dir = await mkdtemp(join(tmpdir(), 'porter-migrate-kill-'));
});
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await pipeline?.close();
  await source?.close();
  await rm(dir, { recursive: true, force: true });
});

function startWorker(): WorkerProcess {
  const worker = spawnWorker({ ...pipeline.childEnv(), PORTER_LOCK_DURATION_MS: '2000' }, [
    '--concurrency',
    '4',
  ]);
  workers.push(worker);
  return worker;
}

describe('a migration whose worker is killed with SIGKILL mid-stage', () => {
  it('goes on when a worker comes back, and accounts for every record once', async () => {
    await seedSource(source.url, { groups: 20, usersPerGroup: 100, aclsPerGroup: 3 });
    const bundle = await bundleText(source.url);
    const bundleFile = join(dir, 'source.json');
    await writeFile(bundleFile, bundle);
    const submitted = await startMigration(pipeline.context, {
      source: Readable.from([Buffer.from(bundle)]),
      options: { mode: 'upsert', dryRun: false, allowAdmin: false, batchSize: 50 },
    });
    const read = (): Promise<MigrationInfo> => requireMigration(pipeline.context, submitted.id);
    const stage = (info: MigrationInfo, name: string) =>
      info.stages.find((one) => one.stage === name)!;
    let worker = startWorker();
    const moments: ((info: MigrationInfo) => boolean)[] = [
      (info) => stage(info, 'acls').phase !== 'pending',
      (info) => stage(info, 'users').done >= 500,
      (info) => stage(info, 'users').done >= 1200,
    ];
    for (const [index, reached] of moments.entries()) {
      await waitFor(async () => (reached(await read()) ? true : undefined), {
        timeoutMs: 120_000,
        what: 'the moment to kill the worker',
      }).catch(async (error: unknown) => {
        // what the migration and the worker were doing, should it ever not get there
        throw new Error(
          `moment ${index + 1} not reached: ${String(error)}\n` +
            `migration: ${JSON.stringify(await read())}\n` +
            `worker (exit ${String(worker.child.exitCode ?? worker.child.signalCode)}):\n` +
            worker.output().slice(-4000),
        );
      });
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      worker = startWorker();
    }
    const final = await waitFor(
      async () => {
        const info = await read();
        return info.state === 'running' ? undefined : info;
      },
      { timeoutMs: 240_000, what: 'the migration to end' },
    );
    expect(final.state).toBe('completed');
    const totals = { groups: 20, acls: 60, users: 2000, memberships: 20 };
    for (const one of final.stages) {
      const total = totals[one.stage];
      expect([one.stage, one.total, one.done, one.counts?.succeeded]).toEqual([
        one.stage,
        total,
        total,
        total,
      ]);
    }
    expect(pipeline.sandbox.store.counts()).toEqual({ users: 2000, groups: 20, acls: 60 });
    // one import per stage: a stage received whole was never submitted again (one cut while
    // it was received is marked abandoned)
    const imports = await pipeline.context.store.list({ limit: 100 });
    const kept = imports.filter((one) => !one.reason?.startsWith('abandoned'));
    expect(kept.map((one) => one.id).sort()).toEqual(
      final.stages.map((one) => one.importId).sort(),
    );
    const diff = await diffDirectories(
      pipeline.context,
      bundleDiffSource(bundleFile),
      liveDiffSource(pipeline.context),
      join(dir, 'diff'),
    );
    expect(diff.equal).toBe(true);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 400_000);
});
