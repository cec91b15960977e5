/**
 * End-to-end import speed and memory: N generated users imported into a sandbox through a real
 * producer process (`porter import --wait`) and real worker processes (`porter worker`), beside
 * the same batches (same batch size, same number of calls in flight) POSTed straight to a
 * sandbox with no queue. A porter create looks records up before it sends them (so a record
 * found after an unanswered call is known to be its own): the end-to-end figure includes those
 * reads, and with --latency each read waits as long as a write.
 *
 *   npx tsx bench/import-throughput.ts [--rows 1000000] [--batch-size 100] [--concurrency 8]
 *       [--latency MS] [--workers N | --curve 1,2,4] [--mode create|upsert [--preseed]]
 *       [--lookup each|snapshot|auto] [--sandbox process|inline] [--json] [--cpu-prof DIR]
 *       [--heap MB]
 *
 * --concurrency is per worker process (`porter worker --concurrency C`); the direct run keeps
 * workers × C calls in flight. --curve runs direct and end to end once per worker count.
 * --lookup is passed to `porter import` only when given. --preseed (upsert only) creates every
 * second user in the end-to-end sandbox beforehand, with other names, so half the import updates.
 * --sandbox process (default) runs each sandbox as its own `porter sandbox` child process, so the
 * sandbox does not share an event loop with the direct client; inline runs it in this process.
 * --cpu-prof DIR writes a V8 CPU profile of every porter process (producer, workers, sandbox
 * children) into DIR, for `node --cpu-prof`-style reading.
 * --heap MB runs the producer and the workers with --max-old-space-size=MB, as
 * docker-compose.yml does (docs/configuration.md#memory); 0 (default) keeps V8's own ceiling, as
 * a plain `porter worker` has. The sandbox always keeps V8's own.
 * --json prints the human lines on stderr and one JSON line of every figure on stdout.
 *
 * Memory: peak resident memory (VmHWM) of the producer, each worker and a sandbox child, and
 * Redis `used_memory` before the import, at its peak (sampled every 200 ms) and once it settles.
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own key prefix, cleaned
 * after each end-to-end run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AdminClient } from '../src/admin/client.js';
import type { UserRecord } from '../src/admin/schemas.js';
import { IMPORT_QUEUE } from '../src/queue/import-queue.js';
import { queuePrefix } from '../src/redis/key-tags.js';
import { importIndexKey } from '../src/results/import-keys.js';
import { ImportStore } from '../src/results/import-store.js';
import { startSandbox } from '../src/sandbox/server.js';
import { deleteKeysWithPrefix } from '../src/util/redis.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'batch-size': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
    latency: { type: 'string', default: '0' },
    workers: { type: 'string', default: '1' },
    curve: { type: 'string' },
    lookup: { type: 'string' },
    mode: { type: 'string', default: 'create' },
    preseed: { type: 'boolean', default: false },
    sandbox: { type: 'string', default: 'process' },
    json: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    heap: { type: 'string', default: '0' },
  },
});

function usage(message: string): never {
  console.error(`import-throughput: ${message}`);
  process.exit(64);
}
function whole(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min) usage(`--${name} must be a whole number ≥ ${min}`);
  return value;
}

const rows = whole('rows', values.rows, 1);
const batchSize = whole('batch-size', values['batch-size'], 1);
const concurrency = whole('concurrency', values.concurrency, 1);
const latency = whole('latency', values.latency, 0);
const curve = values.curve
  ? values.curve.split(',').map((text) => whole('curve', text.trim(), 1))
  : [whole('workers', values.workers, 1)];
const mode = values.mode;
if (mode !== 'create' && mode !== 'upsert') usage('--mode must be create or upsert');
const lookup = values.lookup;
if (lookup !== undefined && !['each', 'snapshot', 'auto'].includes(lookup)) {
  usage('--lookup must be each, snapshot or auto');
}
const preseed = values.preseed;
if (preseed && mode !== 'upsert') usage('--preseed goes with --mode upsert');
const placement = values.sandbox;
// the producer's and workers' V8 heap ceiling (docs/configuration.md#memory); 0: V8's own, sized
// by the machine's memory, under which a worker keeps ~100 MiB of garbage before collecting it
const heapMb = whole('heap', values.heap, 0);
if (placement !== 'process' && placement !== 'inline') usage('--sandbox must be process or inline');

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `porter-bench-${process.pid}`;
/** Human lines go to stderr under --json, so stdout is exactly one JSON line. */
const say = (line: string): void => (values.json ? console.error(line) : console.log(line));
const MiB = 1024 * 1024;
const mib = (bytes: number): string => (bytes / MiB).toFixed(1);
/** Bytes per record with its sign: a shared Redis can shrink while the import runs. */
const perRecord = (bytes: number): string =>
  `${bytes >= 0 ? '+' : '−'}${Math.abs(bytes / rows).toFixed(0)} B/record`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function user(index: number, first = 'First'): UserRecord {
  return {
    username: `bench.user${index}`,
    firstName: `${first}${index}`,
    lastName: `Last${index}`,
    email: `user${index}@example.com`,
    dept: `Dept ${index % 40}`,
  };
}

async function writeCsv(file: string): Promise<void> {
  const out = createWriteStream(file);
  out.write('username,firstName,lastName,email,dept\n');
  for (let index = 1; index <= rows; index++) {
    const row = user(index);
    const line = `${row.username},${row.firstName},${row.lastName},${row.email},${row.dept}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

// ---- peak resident memory ----

/**
 * Loaded into every child with `node --import`: on exit the child writes its own VmHWM (kB) to
 * BENCH_HWM_DIR/<pid>, so a process that has ended (the producer) still reports its true peak.
 */
const HWM_HOOK = `data:text/javascript,${encodeURIComponent(
  "import{readFileSync,writeFileSync}from'node:fs';const d=process.env.BENCH_HWM_DIR;" +
    "if(d)process.on('exit',()=>{try{const m=/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status','utf8'));" +
    "if(m)writeFileSync(d+'/'+process.pid,m[1])}catch{}});",
)}`;

let hwmDir = '';
/** Children still running, and the import under way: what SIGINT/SIGTERM cleans up and reports. */
const running = new Set<ChildProcess>();
let importUnderWay: { started: number; lines: string[] } | undefined;
let readiness: Queue | undefined;
/** Set once a signal arrived: the cleanup it runs ends the process. */
let stopping = false;

/** Peak resident memory (VmHWM) of a process in MiB: live from /proc, else from its exit file. */
async function peakMiB(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  for (const file of [`/proc/${pid}/status`, join(hwmDir, String(pid))]) {
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

function porter(
  args: string[],
  env: NodeJS.ProcessEnv,
  output: { stdout: 'ignore' | 'pipe'; stderr?: 'inherit' | 'pipe' },
): ChildProcess {
  const profile = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
  const heap = heapMb > 0 && args[0] !== 'sandbox' ? [`--max-old-space-size=${heapMb}`] : [];
  const child = spawn(
    'node',
    [...profile, ...heap, '--import', HWM_HOOK, 'bin/porter.js', ...args],
    {
      env: { ...env, BENCH_HWM_DIR: hwmDir },
      stdio: ['ignore', output.stdout, output.stderr ?? 'inherit'],
    },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** The last lines a child wrote to a piped stderr (its progress lines), for its summary. */
function tail(child: ChildProcess, keep = 20): string[] {
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    lines.push(line);
    if (lines.length > keep) lines.shift();
  });
  return lines;
}

/** Sends SIGTERM and waits for the exit; SIGKILL after `ms`. */
async function stop(child: ChildProcess, ms = 60_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(timer);
}

// ---- sandboxes ----

interface BenchSandbox {
  url: string;
  pid: number | undefined;
  close(): Promise<void>;
}

/** A sandbox with the bench's latency: a `porter sandbox` child, or one in this process. */
async function openSandbox(): Promise<BenchSandbox> {
  if (placement === 'inline') {
    const sandbox = await startSandbox({ port: 0, faults: { latencyMs: latency } });
    return { url: sandbox.url, pid: undefined, close: () => sandbox.close() };
  }
  const args = ['sandbox', '--port', '0', '--latency', String(latency)];
  const child = porter(args, { ...process.env, LOG_LEVEL: 'warn' }, { stdout: 'pipe' });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited ${code} before listening`)));
  });
  lines.on('line', () => {}); // keep draining its stdout
  return { url, pid: child.pid, close: () => stop(child) };
}

/** Sends batches with at most `inFlight` calls in flight. */
async function postAll(
  client: AdminClient,
  indexes: (from: number, to: number) => number[],
  make: (index: number) => UserRecord,
  inFlight: number,
): Promise<void> {
  let next = 1;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next <= rows) {
        const from = next;
        next += batchSize;
        const batch = indexes(from, Math.min(from + batchSize, rows + 1)).map(make);
        if (batch.length > 0) await client.postUsers(batch);
      }
    }),
  );
}
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, offset) => from + offset);

/** Users named bench.userN, and those of them carrying the imported first name. */
async function countUsers(url: string): Promise<{ users: number; current: number }> {
  const client = new AdminClient({ baseUrl: url });
  let users = 0;
  let current = 0;
  try {
    for await (const record of client.stream('users')) {
      if (!record.username?.startsWith('bench.user')) continue;
      users++;
      if (record.firstName === `First${record.username.slice('bench.user'.length)}`) current++;
    }
  } finally {
    await client.close();
  }
  return { users, current };
}

// ---- direct ----

interface DirectResult {
  inFlight: number;
  seconds: number;
  rate: number;
  sandboxMiB: number;
}

async function direct(inFlight: number): Promise<DirectResult> {
  const sandbox = await openSandbox();
  const client = new AdminClient({ baseUrl: sandbox.url, connections: inFlight });
  const started = performance.now();
  await postAll(client, range, (index) => user(index), inFlight);
  const seconds = (performance.now() - started) / 1000;
  await client.close();
  await sandbox.close();
  return { inFlight, seconds, rate: rows / seconds, sandboxMiB: await peakMiB(sandbox.pid) };
}

// ---- end to end ----

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/** Redis used_memory once two readings 500 ms apart differ by under 64 KiB (10 s at most). */
async function settledMemory(redis: Redis): Promise<number> {
  let last = await usedMemory(redis);
  for (let tries = 0; tries < 20; tries++) {
    await sleep(500);
    const now = await usedMemory(redis);
    if (Math.abs(now - last) < 64 * 1024) return now;
    last = now;
  }
  return last;
}

/**
 * What the keys under the bench prefix hold (MEMORY USAGE, nested values sampled): unlike
 * used_memory, other users of the same Redis do not skew it; Redis's own overhead is left out.
 */
async function ownKeys(redis: Redis): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of found) pipeline.memory('USAGE', key);
    for (const [, value] of (await pipeline.exec()) ?? []) {
      keys++;
      bytes += Number(value ?? 0);
    }
  } while (cursor !== '0');
  return { keys, bytes };
}

/** Waits until BullMQ sees `count` worker connections on the import queue. */
async function workersReady(count: number, children: ChildProcess[]): Promise<void> {
  const queue = new Queue(IMPORT_QUEUE, {
    connection: { url: redisUrl },
    prefix: queuePrefix(prefix, IMPORT_QUEUE),
  });
  readiness = queue;
  try {
    const deadline = Date.now() + 120_000;
    while ((await queue.getWorkers()).length < count) {
      if (children.some((child) => child.exitCode !== null)) throw new Error('a worker exited');
      if (Date.now() > deadline) throw new Error(`${count} workers not ready after 120 s`);
      await sleep(100);
    }
  } finally {
    readiness = undefined;
    await queue.close();
  }
}

interface EndToEndResult {
  workers: number;
  seconds: number;
  rate: number;
  producerMiB: number;
  workerMiB: number[];
  sandboxMiB: number;
  redis: { beforeBytes: number; peakBytes: number; settledBytes: number };
  /** Keys under the bench prefix once the import settled, and their MEMORY USAGE. */
  own: { keys: number; bytes: number };
  phases?: { startUp: number; upload: number; snapshot: number; batches: number };
  users: number;
  /** The producer's last line: the import's summary. */
  summary: string;
}

async function endToEnd(file: string, workerCount: number): Promise<EndToEndResult> {
  const sandbox = await openSandbox();
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const workers: ChildProcess[] = [];
  try {
    if (preseed) {
      // every second user exists beforehand under another first name: the import updates it
      const client = new AdminClient({ baseUrl: sandbox.url, connections: concurrency });
      const evens = (from: number, to: number): number[] =>
        range(from, to).filter((index) => index % 2 === 0);
      await postAll(client, evens, (index) => user(index, 'Old'), concurrency * workerCount);
      await client.close();
    }
    const env = {
      ...process.env,
      REDIS_URL: redisUrl,
      PORTER_PREFIX: prefix,
      ADMIN_BASE_URL: sandbox.url,
      LOG_LEVEL: 'warn',
    };
    for (let n = 0; n < workerCount; n++) {
      workers.push(
        porter(['worker', '--concurrency', String(concurrency)], env, { stdout: 'ignore' }),
      );
    }
    // Start-up (tsx loading the sources) is left out of the timing: the import starts once
    // every worker listens. Each worker process holds at least one named connection.
    await workersReady(workerCount, workers);

    // Redis is shared with other engineers' work: anything else writing to it while this runs
    // skews these three readings, and so the bytes per record derived from them.
    const beforeBytes = await usedMemory(redis);
    let peakBytes = beforeBytes;
    let producerMiB = 0;
    const args = ['import', file, '--resource', 'users', '--mode', mode];
    args.push('--batch-size', String(batchSize), '--wait');
    if (lookup !== undefined) args.push('--lookup', lookup);
    const started = performance.now();
    const producer = porter(args, env, { stdout: 'ignore', stderr: 'pipe' });
    const producerLines = tail(producer);
    importUnderWay = { started, lines: producerLines };
    const sampler = setInterval(() => {
      void usedMemory(redis).then((bytes) => (peakBytes = Math.max(peakBytes, bytes)));
      void peakMiB(producer.pid).then((value) => (producerMiB = Math.max(producerMiB, value)));
    }, 200);
    // 'close': exited, and its stderr read to the end
    const [code] = (await once(producer, 'close')) as [number | null];
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    importUnderWay = undefined;
    if (code !== 0) {
      if (!stopping) console.error(producerLines.join('\n'));
      throw new Error(`porter import exited ${code}`);
    }
    peakBytes = Math.max(peakBytes, await usedMemory(redis));
    const settledBytes = await settledMemory(redis);
    const own = await ownKeys(redis);
    const phases = await importPhases(redis, started);
    producerMiB = Math.max(producerMiB, await peakMiB(producer.pid));

    await Promise.all(workers.map((worker) => stop(worker)));
    const workerMiB = await Promise.all(workers.map((worker) => peakMiB(worker.pid)));
    const counted = await countUsers(sandbox.url);
    if (counted.users !== rows || counted.current !== rows) {
      throw new Error(
        `expected ${rows} imported users in the sandbox, found ${counted.users} (${counted.current} with the imported names)`,
      );
    }
    await sandbox.close();
    return {
      workers: workerCount,
      seconds,
      rate: rows / seconds,
      producerMiB,
      workerMiB,
      sandboxMiB: await peakMiB(sandbox.pid),
      redis: { beforeBytes, peakBytes, settledBytes },
      own,
      phases,
      users: counted.users,
      summary: producerLines.at(-1) ?? '',
    };
  } finally {
    await Promise.all(workers.map((worker) => stop(worker)));
    await sandbox.close();
    redis.disconnect();
    await deleteKeysWithPrefix(redisUrl, prefix);
  }
}

/**
 * Where the end-to-end seconds went, from the import's own record: start-up until the import
 * was created, the upload until the snapshot's read began, the read, then the batches until the
 * import ended.
 */
async function importPhases(
  redis: Redis,
  started: number,
): Promise<{ startUp: number; upload: number; snapshot: number; batches: number } | undefined> {
  const [id] = await redis.zrange(importIndexKey(prefix), '0', '0');
  if (id === undefined) return undefined;
  const store = new ImportStore({ redis, prefix });
  const info = await store.get(id);
  const takenAt = info?.lookup?.takenAt;
  if (!info?.finishedAt || !takenAt) return undefined;
  const startedAt = performance.timeOrigin + started;
  const read = (info.lookup?.durationMs ?? 0) / 1000;
  const created = Date.parse(info.createdAt);
  return {
    startUp: (created - startedAt) / 1000,
    upload: (Date.parse(takenAt) - created) / 1000,
    snapshot: read,
    batches: (Date.parse(info.finishedAt) - Date.parse(takenAt)) / 1000 - read,
  };
}

// ---- run ----

const dir = await mkdtemp(join(tmpdir(), 'porter-bench-'));
hwmDir = join(dir, 'hwm');
await mkdir(hwmDir);

/** Interrupted (a time limit, ^C): says how far the import got, stops the children, cleans up. */
async function interrupted(signal: NodeJS.Signals): Promise<void> {
  // npx and tsx pass a signal on too: a repeat must not cut the cleanup short
  if (stopping) return;
  stopping = true;
  if (importUnderWay) {
    const seconds = (performance.now() - importUnderWay.started) / 1000;
    say(
      `\n${signal} after ${seconds.toFixed(0)} s of the end-to-end import; its last progress line:`,
    );
    say(`  ${importUnderWay.lines.at(-1) ?? '(none)'}`);
  } else {
    say(`\n${signal}: stopping`);
  }
  await Promise.all([...running].map((child) => stop(child, 5_000)));
  await readiness?.close();
  await deleteKeysWithPrefix(redisUrl, prefix);
  await rm(dir, { recursive: true, force: true });
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
process.on('SIGINT', (signal) => void interrupted(signal));
process.on('SIGTERM', (signal) => void interrupted(signal));
try {
  const file = join(dir, 'users.csv');
  await writeCsv(file);
  const load = loadavg()[0]!.toFixed(2);
  say(
    `rows ${rows}, batch size ${batchSize}, concurrency ${concurrency} per worker, latency ${latency} ms, ` +
      `mode ${mode}${preseed ? ' (half preseeded)' : ''}, lookup ${lookup ?? '(not passed)'}, ` +
      `heap ceiling of producer and workers ${heapMb > 0 ? `${heapMb} MiB` : "V8's default"}`,
  );
  say(
    `sandbox: ${placement === 'process' ? 'own child process (porter sandbox) for direct and end to end' : 'inline, in this bench process, for direct and end to end'}; ` +
      `${cpus().length} cores, load ${load} at start`,
  );
  const points: { direct: DirectResult; endToEnd: EndToEndResult }[] = [];
  for (const workerCount of curve) {
    say(`\n${workerCount} worker${workerCount > 1 ? 's' : ''} × concurrency ${concurrency}:`);
    const directResult = await direct(workerCount * concurrency);
    say(
      `  direct POSTs, ${directResult.inFlight} in flight (no queue, no lookups): ${directResult.rate.toFixed(0)} records/s (${directResult.seconds.toFixed(1)} s)`,
    );
    const e2e = await endToEnd(file, workerCount);
    points.push({ direct: directResult, endToEnd: e2e });
    const { redis } = e2e;
    say(`  ${e2e.summary}`);
    say(
      `  porter end to end (producer, queue, workers):      ${e2e.rate.toFixed(0)} records/s (${e2e.seconds.toFixed(1)} s)` +
        `  = ${(e2e.rate / directResult.rate).toFixed(2)} × direct`,
    );
    say(
      `  peak RSS: producer ${e2e.producerMiB.toFixed(0)} MiB, workers ${e2e.workerMiB.map((value) => value.toFixed(0)).join(' / ')} MiB` +
        (placement === 'process'
          ? `, sandbox ${e2e.sandboxMiB.toFixed(0)} MiB (direct run's ${directResult.sandboxMiB.toFixed(0)} MiB)`
          : ''),
    );
    say(
      `  Redis used_memory: before ${mib(redis.beforeBytes)} MiB, peak ${mib(redis.peakBytes)} MiB ` +
        `(${perRecord(redis.peakBytes - redis.beforeBytes)}), settled ${mib(redis.settledBytes)} MiB ` +
        `(${perRecord(redis.settledBytes - redis.beforeBytes)})`,
    );
    if (e2e.phases) {
      const { startUp, upload, snapshot, batches } = e2e.phases;
      say(
        `  phases: start-up ${startUp.toFixed(1)} s, upload ${upload.toFixed(1)} s (${(rows / upload).toFixed(0)} records/s), snapshot read ${snapshot.toFixed(1)} s, batches ${batches.toFixed(1)} s (${(rows / batches).toFixed(0)} records/s)`,
      );
    }
    say(
      `  Redis keys under the bench prefix once settled: ${e2e.own.keys} keys, ${mib(e2e.own.bytes)} MiB (${perRecord(e2e.own.bytes)})`,
    );
  }
  const base = points.find((point) => point.endToEnd.workers === 1) ?? points[0]!;
  if (points.length > 1) {
    say(
      `\nscaling (end to end, ratio to ${base.endToEnd.workers} worker${base.endToEnd.workers > 1 ? 's' : ''}):`,
    );
    for (const { direct: directResult, endToEnd: e2e } of points) {
      say(
        `  ${String(e2e.workers).padStart(3)} workers: ${e2e.rate.toFixed(0).padStart(8)} records/s  ` +
          `${(e2e.rate / base.endToEnd.rate).toFixed(2)} ×   (direct ${directResult.rate.toFixed(0)} records/s, ` +
          `${(directResult.rate / base.direct.rate).toFixed(2)} ×)`,
      );
    }
  }
  if (values.json) {
    console.log(
      JSON.stringify({
        rows,
        batchSize,
        concurrency,
        latencyMs: latency,
        mode,
        preseed,
        lookup: lookup ?? null,
        sandbox: placement,
        cores: cpus().length,
        loadAtStart: Number(load),
        points: points.map(({ direct: directResult, endToEnd: e2e }) => ({
          workers: e2e.workers,
          direct: {
            inFlight: directResult.inFlight,
            seconds: directResult.seconds,
            recordsPerSecond: directResult.rate,
            sandboxPeakMiB: directResult.sandboxMiB || null,
          },
          endToEnd: {
            seconds: e2e.seconds,
            recordsPerSecond: e2e.rate,
            ratioToDirect: e2e.rate / directResult.rate,
            ratioToBase: e2e.rate / base.endToEnd.rate,
            producerPeakMiB: e2e.producerMiB,
            workerPeakMiB: e2e.workerMiB,
            sandboxPeakMiB: e2e.sandboxMiB || null,
            redisUsedMemory: {
              ...e2e.redis,
              peakBytesPerRecord: (e2e.redis.peakBytes - e2e.redis.beforeBytes) / rows,
              settledBytesPerRecord: (e2e.redis.settledBytes - e2e.redis.beforeBytes) / rows,
            },
            redisOwnKeys: { ...e2e.own, bytesPerRecord: e2e.own.bytes / rows },
          },
        })),
      }),
    );
  }
} catch (error) {
  // a signal's cleanup ends the process; the failure it caused here is not the story
  if (stopping) await new Promise(() => {});
  throw error;
} finally {
  await rm(dir, { recursive: true, force: true });
  await deleteKeysWithPrefix(redisUrl, prefix);
}
