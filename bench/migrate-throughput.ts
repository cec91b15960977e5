/**
 * Migration speed and memory: a source sandbox seeded with N users, G groups and A ACLs is
 * exported as a bundle, and the bundle is migrated into an empty target sandbox through a real
 * producer process (`porter migrate --wait`) and real worker processes (`porter worker`). Beside
 * it, the same users (the records the users stage sends) are imported alone into another empty
 * sandbox with `porter import --wait` and the same workers: the direct figure. The target is a
 * migration within 1.5 × the time of that import.
 *
 *   npx tsx bench/migrate-throughput.ts [--users 100000] [--groups 1000] [--acls 2000]
 *       [--batch-size 100] [--concurrency 8] [--workers 1] [--latency MS] [--json]
 *
 * Prints records/s per stage (from each stage import's creation to its end) and overall, the
 * direct import's users/s, the ratio of the two wall times, and the peak resident memory
 * (VmHWM) of the producer and of each worker. Sandboxes run as `porter sandbox` child processes,
 * so they do not share an event loop with this script.
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); each run uses its own key prefix,
 * removed afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AdminClient } from '../src/admin/client.js';
import type { ResourceName } from '../src/admin/resources.js';
import { bundleSource } from '../src/export/bundle.js';
import type { RecordBatches } from '../src/export/export-types.js';
import { readBundle } from '../src/migrate/bundle-reader.js';
import { MigrationStore } from '../src/migrate/migration-store.js';
import type { MigrationInfo } from '../src/migrate/migration-model.js';
import { stageLine } from '../src/migrate/stage-records.js';
import { MIGRATION_QUEUE } from '../src/queue/migration-queue.js';
import { ImportStore } from '../src/results/import-store.js';
import { deleteKeysWithPrefix } from '../src/util/redis.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    groups: { type: 'string', default: '1000' },
    acls: { type: 'string', default: '2000' },
    'batch-size': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
    workers: { type: 'string', default: '1' },
    latency: { type: 'string', default: '0' },
    json: { type: 'boolean', default: false },
  },
});

function whole(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min) {
    console.error(`migrate-throughput: --${name} must be a whole number ≥ ${min}`);
    process.exit(64);
  }
  return value;
}

const users = whole('users', values.users, 1);
const groups = whole('groups', values.groups, 1);
const acls = whole('acls', values.acls, 0);
const batchSize = whole('batch-size', values['batch-size'], 1);
const concurrency = whole('concurrency', values.concurrency, 1);
const workerCount = whole('workers', values.workers, 1);
const latency = whole('latency', values.latency, 0);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const say = (line: string): void => (values.json ? console.error(line) : console.log(line));

/** Loaded into every child: on exit it writes its VmHWM (kB) to BENCH_HWM_DIR/<pid>. */
const HWM_HOOK = `data:text/javascript,${encodeURIComponent(
  "import{readFileSync,writeFileSync}from'node:fs';const d=process.env.BENCH_HWM_DIR;" +
    "if(d)process.on('exit',()=>{try{const m=/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status','utf8'));" +
    "if(m)writeFileSync(d+'/'+process.pid,m[1])}catch{}});",
)}`;

let workDir = '';
const running = new Set<ChildProcess>();

function porter(args: string[], env: NodeJS.ProcessEnv, stdout: 'ignore' | 'pipe'): ChildProcess {
  const child = spawn('node', ['--import', HWM_HOOK, 'bin/porter.js', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', BENCH_HWM_DIR: workDir, ...env },
    stdio: ['ignore', stdout, 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

async function peakMiB(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  for (const file of [`/proc/${pid}/status`, join(workDir, String(pid))]) {
    try {
      const text = await readFile(file, 'utf8');
      const kB = file.startsWith('/proc') ? /VmHWM:\s+(\d+) kB/.exec(text)?.[1] : text.trim();
      if (kB) return Number(kB) / 1024;
    } catch {
      // gone, or no exit file yet
    }
  }
  return 0;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** A `porter sandbox` child; `seed` fills it. */
async function openSandbox(seed?: string[]): Promise<{ url: string; child: ChildProcess }> {
  const args = ['sandbox', '--port', '0', '--latency', String(latency), ...(seed ?? [])];
  const child = porter(args, {}, 'pipe');
  child.stderr!.on('data', () => {});
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited ${code} before listening`)));
  });
  return { url, child };
}

async function writeStream(path: string, parts: AsyncIterable<string>): Promise<void> {
  const out = createWriteStream(path);
  for await (const part of parts) if (!out.write(part)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

/** The bundle of the source, as `porter export --format bundle` writes it. */
async function exportBundle(url: string, path: string): Promise<void> {
  const client = new AdminClient({ baseUrl: url, requestTimeoutMs: 120_000 });
  const read = (resource: ResourceName) => (): RecordBatches =>
    client.streamBatches(resource) as RecordBatches;
  try {
    await writeStream(
      path,
      bundleSource({ exportedAt: new Date().toISOString(), source: url, porterVersion: 'bench' }, [
        ['groups', read('groups')],
        ['users', read('users')],
        ['acls', read('acls')],
      ]),
    );
  } finally {
    await client.close();
  }
}

/** The users stage's records, as NDJSON: what the direct import sends. */
async function* usersNdjson(bundle: string): AsyncGenerator<string> {
  for await (const part of readBundle(createReadStream(bundle))) {
    if (part.kind !== 'records' || part.resource !== 'users') continue;
    let text = '';
    for (const record of part.records) {
      text += `${JSON.stringify(stageLine('users', record, () => undefined))}\n`;
    }
    yield text;
  }
}

interface Run {
  seconds: number;
  producerMiB: number;
  workerMiB: number[];
  prefix: string;
}

/** Starts workers on a fresh prefix against `url`, runs the producer command, stops the workers. */
async function runWithWorkers(url: string, args: string[], label: string): Promise<Run> {
  const prefix = `porter-bench-migrate-${process.pid}-${label}`;
  const env = { REDIS_URL: redisUrl, PORTER_PREFIX: prefix, ADMIN_BASE_URL: url };
  const workers = Array.from({ length: workerCount }, () =>
    porter(['worker', '--concurrency', String(concurrency)], env, 'ignore'),
  );
  for (const worker of workers) worker.stderr!.on('data', () => {});
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(MIGRATION_QUEUE, { connection: redis, prefix });
  try {
    for (;;) {
      if ((await queue.getWorkers()).length >= workerCount) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await queue.close();
    await redis.quit();
  }
  const started = performance.now();
  const producer = porter(args, env, 'ignore');
  let errors = '';
  producer.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const [code] = (await once(producer, 'exit')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) say(`${label}: exit ${code}\n${errors.slice(-2000)}`);
  const workerMiB = await Promise.all(workers.map((worker) => peakMiB(worker.pid)));
  await Promise.all(workers.map(stop));
  return { seconds, producerMiB: await peakMiB(producer.pid), workerMiB, prefix };
}

async function migrationOf(prefix: string): Promise<MigrationInfo> {
  const redis = new Redis(redisUrl);
  try {
    const migrations = new MigrationStore({ redis, prefix });
    const imports = new ImportStore({ redis, prefix });
    const [id] = await redis.zrange(`${prefix}:migrations`, '-1', '-1');
    const info = await migrations.get(id!, imports);
    if (!info) throw new Error('the migration is gone');
    for (const stage of info.stages) {
      const imported = stage.importId ? await imports.get(stage.importId) : undefined;
      if (imported?.finishedAt) {
        const ms = Date.parse(imported.finishedAt) - Date.parse(imported.createdAt);
        const from = Date.parse(info.createdAt);
        Object.assign(stage, {
          seconds: ms / 1000,
          startsAt: (Date.parse(imported.createdAt) - from) / 1000,
          endsAt: (Date.parse(imported.finishedAt) - from) / 1000,
        });
      }
    }
    return info;
  } finally {
    await redis.quit();
  }
}

async function main(): Promise<void> {
  workDir = await mkdtemp(join(tmpdir(), 'porter-bench-migrate-'));
  const bundle = join(workDir, 'bundle.json');
  const usersFile = join(workDir, 'users.ndjson');
  const prefixes: string[] = [];
  const sandboxes: ChildProcess[] = [];
  try {
    say(
      `source: ${users} users, ${groups} groups, ${acls} ACLs; batch ${batchSize}, ${workerCount} worker(s) × ${concurrency}, latency ${latency} ms`,
    );
    const source = await openSandbox([
      '--seed-users',
      String(users),
      '--seed-groups',
      String(groups),
      '--seed-acls',
      String(acls),
    ]);
    sandboxes.push(source.child);
    await exportBundle(source.url, bundle);
    await writeStream(usersFile, usersNdjson(bundle));
    await stop(source.child);

    const migrationTarget = await openSandbox();
    sandboxes.push(migrationTarget.child);
    const migration = await runWithWorkers(
      migrationTarget.url,
      ['migrate', bundle, '--allow-admin', '--batch-size', String(batchSize), '--wait'],
      'migrate',
    );
    prefixes.push(migration.prefix);
    const info = await migrationOf(migration.prefix);
    await stop(migrationTarget.child);

    const importTarget = await openSandbox();
    sandboxes.push(importTarget.child);
    const direct = await runWithWorkers(
      importTarget.url,
      [
        'import',
        usersFile,
        '--resource',
        'users',
        '--mode',
        'upsert',
        '--allow-admin',
        '--allow-lookalike',
        '--batch-size',
        String(batchSize),
        '--wait',
      ],
      'import',
    );
    prefixes.push(direct.prefix);
    await stop(importTarget.child);

    const records = info.stages.reduce((sum, stage) => sum + stage.total, 0);
    const figures: Record<string, unknown> = { users, groups, acls, state: info.state };
    say(`migration ${info.state}`);
    for (const stage of info.stages) {
      const timing = stage as typeof stage & {
        seconds?: number;
        startsAt?: number;
        endsAt?: number;
      };
      const seconds = timing.seconds ?? 0;
      const rate = seconds > 0 ? Math.round(stage.total / seconds) : 0;
      figures[stage.stage] = {
        records: stage.total,
        seconds,
        perSecond: rate,
        startsAt: timing.startsAt,
        endsAt: timing.endsAt,
      };
      say(
        `  ${stage.stage.padEnd(12)} ${String(stage.total).padStart(8)} records in ${seconds.toFixed(1).padStart(6)} s: ${String(rate).padStart(7)} records/s, ${(timing.startsAt ?? 0).toFixed(1)}–${(timing.endsAt ?? 0).toFixed(1)} s after the migration began`,
      );
    }
    const overall = Math.round(records / migration.seconds);
    const directRate = Math.round(users / direct.seconds);
    const ratio = migration.seconds / direct.seconds;
    say(
      `  overall      ${String(records).padStart(8)} records in ${migration.seconds.toFixed(1).padStart(6)} s: ${String(overall).padStart(7)} records/s (producer included)`,
    );
    say(
      `direct import of the same ${users} users: ${direct.seconds.toFixed(1)} s, ${directRate} users/s`,
    );
    say(`migration / direct import: ${ratio.toFixed(2)} × (target ≤ 1.5 ×)`);
    say(
      `peak RSS: migrate producer ${migration.producerMiB.toFixed(0)} MiB, workers ${migration.workerMiB.map((m) => m.toFixed(0)).join(', ')} MiB; import producer ${direct.producerMiB.toFixed(0)} MiB, workers ${direct.workerMiB.map((m) => m.toFixed(0)).join(', ')} MiB`,
    );
    Object.assign(figures, {
      overall: { records, seconds: migration.seconds, perSecond: overall },
      direct: { users, seconds: direct.seconds, perSecond: directRate },
      ratio,
      peakMiB: {
        migrateProducer: migration.producerMiB,
        migrateWorkers: migration.workerMiB,
        importProducer: direct.producerMiB,
        importWorkers: direct.workerMiB,
      },
      bundleBytes: (await stat(bundle)).size,
    });
    if (values.json) console.log(JSON.stringify(figures));
  } finally {
    for (const child of [...running]) await stop(child);
    for (const prefix of prefixes) await deleteKeysWithPrefix(redisUrl, prefix);
    await rm(workDir, { recursive: true, force: true });
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(130);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
