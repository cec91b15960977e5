/**
 * A lost worker: two `porter worker` processes share an import on a Redis of their own; one is
 * killed with SIGKILL part-way. Prints the time from the kill to the other worker's takeover
 * line, the time to finish after the kill, users created (duplicates show as more than the
 * total), write calls, and the commands Redis processed (its load).
 *
 *   npx tsx bench/takeover.ts [--users 3000] [--lock 6000] [--latency 40]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createPorterContext } from '../src/app/context.js';
import { startImport } from '../src/app/imports.js';
import { startLocalRedis } from '../src/app/local-redis.js';
import { loadEnv } from '../src/config/env.js';
import { startSandbox } from '../src/sandbox/server.js';
import { silentLogger } from '../src/util/logger.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '3000' },
    lock: { type: 'string', default: '6000' },
    latency: { type: 'string', default: '40' },
  },
});
const total = Number(values.users);
const local = await startLocalRedis();
if (!local) throw new Error('no redis-server on the PATH');
const sandbox = await startSandbox({ port: 0, faults: { latencyMs: Number(values.latency) } });
const env = loadEnv({
  REDIS_URL: local.url,
  ADMIN_BASE_URL: sandbox.url,
  PORTER_LOCK_DURATION_MS: values.lock,
});
const context = await createPorterContext(env, { logger: silentLogger });
const probe = new Redis(local.url);
const commands = async (): Promise<number> =>
  Number(/total_commands_processed:(\d+)/.exec(await probe.info('stats'))![1]);

function worker(): { child: ChildProcess; lines: { at: number; text: string }[] } {
  const child = spawn('node', ['bin/porter.js', 'worker', '--concurrency', '4'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      REDIS_URL: local!.url,
      ADMIN_BASE_URL: sandbox.url,
      PORTER_LOCK_DURATION_MS: values.lock,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: { at: number; text: string }[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      for (const text of chunk.toString().split('\n'))
        if (text) lines.push({ at: Date.now(), text });
    });
  }
  return { child, lines };
}

try {
  const rows = Array.from({ length: total }, (_, index) => `takeover.${index},T${index}`);
  const before = await commands();
  const a = worker();
  const b = worker();
  const submitted = await startImport(context, {
    options: {
      resource: 'users',
      mode: 'create',
      batchSize: 50,
      listSeparator: '|',
      emptyAsClear: false,
      allowAdmin: false,
    },
    source: Readable.from([Buffer.from(`username,lastName\n${rows.join('\n')}\n`)]),
    fileName: 'users.csv',
  });
  const started = Date.now();
  for (;;) {
    const info = await context.store.get(submitted.id);
    if ((info?.done ?? 0) >= total * 0.3) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  a.child.kill('SIGKILL');
  const killedAt = Date.now();
  let info = await context.store.get(submitted.id);
  while (!info?.settled) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    info = await context.store.get(submitted.id);
  }
  const endedAt = Date.now();
  const takeover = b.lines.find((line) => line.text.includes('taking over a batch'));
  const stats = sandbox.store.stats;
  console.log(
    JSON.stringify(
      {
        lockMs: Number(values.lock),
        users: total,
        counts: info.counts,
        created: stats.applied.users.created,
        onServer: sandbox.store.counts().users,
        writeCalls: stats.writes.users.POST + stats.writes.users.PUT,
        refusals: stats.refusals,
        takeoverAfterKillMs: takeover ? takeover.at - killedAt : null,
        takeoverLines: b.lines.filter((line) => line.text.includes('taking over')).length,
        finishAfterKillMs: endedAt - killedAt,
        runMs: endedAt - started,
        redisCommands: (await commands()) - before,
      },
      null,
      1,
    ),
  );
  b.child.kill('SIGTERM');
} finally {
  await context.close();
  probe.disconnect();
  await sandbox.close();
  await local.stop();
}
