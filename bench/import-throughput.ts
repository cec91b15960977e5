/**
 * End-to-end import speed and memory: N generated users imported into an in-process sandbox
 * through a real producer process (`porter import --wait`) and a real worker process
 * (`porter worker`), beside the same batches sent straight to a sandbox without the queue.
 * A porter create looks each record up before it sends it (so a record found after an
 * unanswered call is known to be its own): the end-to-end figure includes one GET per record.
 *
 *   npx tsx bench/import-throughput.ts [--rows 1000000] [--batch-size 100] [--concurrency 8]
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own key prefix.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { deleteKeysWithPrefix } from '../src/util/redis.js';
import { AdminClient } from '../src/admin/client.js';
import { startSandbox } from '../src/sandbox/server.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'batch-size': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
  },
});
const rows = Number(values.rows);
const batchSize = Number(values['batch-size']);
const concurrency = Number(values.concurrency);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `porter-bench-${process.pid}`;

function userRow(index: number): string {
  return `bench.user${index},First${index},Last${index},user${index}@example.com,Dept ${index % 40}\n`;
}

async function writeCsv(file: string): Promise<void> {
  const out = createWriteStream(file);
  out.write('username,firstName,lastName,email,dept\n');
  for (let index = 1; index <= rows; index++) {
    if (!out.write(userRow(index))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Peak resident memory (VmHWM) of a running process, in MiB, or 0 once it is gone. */
async function peakMiB(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function direct(): Promise<number> {
  const sandbox = await startSandbox({ port: 0 });
  const client = new AdminClient({ baseUrl: sandbox.url });
  const started = performance.now();
  let next = 1;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next <= rows) {
        const from = next;
        next += batchSize;
        const batch = [];
        for (let index = from; index < Math.min(from + batchSize, rows + 1); index++) {
          batch.push({
            username: `bench.user${index}`,
            firstName: `First${index}`,
            lastName: `Last${index}`,
            email: `user${index}@example.com`,
            dept: `Dept ${index % 40}`,
          });
        }
        await client.postUsers(batch);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await client.close();
  await sandbox.close();
  return rows / seconds;
}

async function queued(
  file: string,
): Promise<{ rate: number; producerMiB: number; workerMiB: number }> {
  const sandbox = await startSandbox({ port: 0 });
  const env = {
    ...process.env,
    REDIS_URL: redisUrl,
    PORTER_PREFIX: prefix,
    ADMIN_BASE_URL: sandbox.url,
    LOG_LEVEL: 'warn',
  };
  const worker = spawn('node', ['bin/porter.js', 'worker', '--concurrency', String(concurrency)], {
    env,
    stdio: 'inherit',
  });
  let workerMiB = 0;
  const started = performance.now();
  const producer = spawn(
    'node',
    [
      'bin/porter.js',
      'import',
      file,
      '--resource',
      'users',
      '--mode',
      'create',
      '--batch-size',
      String(batchSize),
      '--wait',
    ],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let producerMiB = 0;
  const sampler = setInterval(() => {
    void peakMiB(producer.pid!).then((value) => (producerMiB = Math.max(producerMiB, value)));
    void peakMiB(worker.pid!).then((value) => (workerMiB = Math.max(workerMiB, value)));
  }, 200);
  const [code] = (await once(producer, 'exit')) as [number];
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  workerMiB = Math.max(workerMiB, await peakMiB(worker.pid!));
  worker.kill('SIGTERM');
  await once(worker, 'exit');
  if (code !== 0) throw new Error(`import exited ${code}`);
  const created = sandbox.store.counts().users;
  if (created !== rows) throw new Error(`expected ${rows} users in the sandbox, found ${created}`);
  await sandbox.close();
  return { rate: rows / seconds, producerMiB, workerMiB };
}

async function cleanup(): Promise<void> {
  await deleteKeysWithPrefix(redisUrl, prefix);
}

const dir = await mkdtemp(join(tmpdir(), 'porter-bench-'));
try {
  const file = join(dir, 'users.csv');
  await writeCsv(file);
  console.log(`rows ${rows}, batch size ${batchSize}, concurrency ${concurrency}`);
  const directRate = await direct();
  console.log(
    `direct POSTs to a sandbox (no queue, no lookups):   ${directRate.toFixed(0)} records/s`,
  );
  const result = await queued(file);
  console.log(
    `porter end to end (queue, one lookup per record): ${result.rate.toFixed(0)} records/s`,
  );
  console.log(
    `peak memory: producer ${result.producerMiB.toFixed(0)} MiB, worker ${result.workerMiB.toFixed(0)} MiB`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await cleanup();
}
