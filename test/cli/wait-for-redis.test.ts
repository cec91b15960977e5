import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { freePort } from '../helpers/redis-topology.js';

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/** A private redis-server whose data survives a restart (append-only, synced on every write). */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
    ],
    { stdio: 'ignore' },
  );
  await waitFor(
    async () => {
      const probe = new Redis({
        port,
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    },
    { what: 'redis-server to answer' },
  );
  return child;
}

let pipeline: Pipeline | undefined;
let redis: ChildProcess | undefined;
let cli: ChildProcess | undefined;
let dir: string | undefined;
afterAll(async () => {
  if (cli && cli.exitCode === null) cli.kill('SIGKILL');
  await pipeline?.close();
  redis?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.runIf(hasRedisServer)('porter import --wait while Redis goes away and comes back', () => {
  it('says "waiting for Redis" once, then follows the import to its end', async () => {
    dir = await mkdtemp(join(tmpdir(), 'porter-wait-redis-'));
    const port = await freePort();
    redis = await startRedis(port, dir);
    pipeline = await startPipeline({
      redisUrl: `redis://127.0.0.1:${port}`,
      sandbox: { faults: { latencyMs: 20 } },
      workerOptions: { concurrency: 2 },
    });
    const total = 2_000;
    const file = join(dir, 'users.csv');
    await writeFile(
      file,
      csv(
        ['username'],
        Array.from({ length: total }, (_, index) => [`waiting.user${index + 1}`]),
      ),
    );
    let stdout = '';
    let stderr = '';
    cli = spawn(
      'node',
      ['bin/porter.js', 'import', file, '--resource', 'users', '--mode', 'create', '--wait'],
      { env: { ...process.env, ...pipeline.childEnv(), LOG_LEVEL: 'error' } },
    );
    cli.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    cli.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(cli, 'exit') as Promise<[number | null]>;

    const id = await waitFor(async () => stdout.trim() || undefined, {
      timeoutMs: 30_000,
      what: 'the import id',
    });
    await waitFor(
      async () => {
        const info = await pipeline!.context.store.get(id);
        return info && info.done >= total * 0.1 ? true : undefined;
      },
      { timeoutMs: 60_000, what: '10% of the import' },
    );
    redis.kill('SIGTERM'); // flushes the append-only file and exits
    await once(redis, 'exit');
    await waitFor(async () => (stderr.includes('waiting for Redis') ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the "waiting for Redis" line',
    });
    expect(cli.exitCode).toBeNull();
    redis = await startRedis(port, dir);

    const [code] = await exited;
    expect(stderr).toMatch(/Redis is back; following/);
    expect(stderr.match(/waiting for Redis/g)).toHaveLength(1);
    expect(stderr).toMatch(
      new RegExp(`import ${id} completed: ${total} records, ${total} succeeded`),
    );
    expect(code, stderr).toBe(0);
    expect(pipeline.sandbox.store.stats.applied.users.created).toBe(total);
  });
});
