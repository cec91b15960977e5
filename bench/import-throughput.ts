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
 *       [--lookup each|snapshot|auto] [--sandbox process|inline] [--redis private|shared]
 *       [--stream] [--via cli|api] [--json] [--cpu-prof DIR] [--heap MB]
 *
 * --concurrency is per worker process (`porter worker --concurrency C`); the direct run keeps
 * workers × C calls in flight. --curve runs direct and end to end once per worker count.
 * --lookup is passed to `porter import` only when given; --stream imports with `--stream`
 * (batches go while the file is read, docs/streaming.md). --via api submits the file to a
 * running `porter api` (one raw text/csv request, started with the workers before the timing, as
 * an HR feed posting to a deployed API would) instead of running `porter import --wait`: the
 * import then has no start-up to pay, and the producer's CPU is the API's over the import.
 * --preseed (upsert only) creates every second user in the end-to-end sandbox beforehand, with
 * other names, so half the import updates.
 * --sandbox process (default) runs each sandbox as its own `porter sandbox` child process, so the
 * sandbox does not share an event loop with the direct client; inline runs it in this process.
 * --cpu-prof DIR writes a V8 CPU profile of every porter process (producer, workers, sandbox
 * children) into DIR, for `node --cpu-prof`-style reading.
 * --heap MB runs the producer and the workers with --max-old-space-size=MB, as
 * docker-compose.yml does (docs/configuration.md#memory); 0 (default) keeps V8's own ceiling, as
 * a plain `porter worker` has. The sandbox always keeps V8's own.
 * --redis private (the default when redis-server is on PATH) starts a redis-server of its own
 * for each end-to-end run, on a free port and without persistence, so its CPU time and memory
 * are the run's alone; shared uses Redis at REDIS_URL (default redis://127.0.0.1:6379) under a
 * key prefix of its own, cleaned after each end-to-end run.
 * --json prints the human lines on stderr and one JSON line of every figure on stdout.
 *
 * Memory: peak resident memory (VmHWM) of the producer, each worker and a sandbox child, and
 * Redis `used_memory` before the import, at its peak (sampled every 200 ms) and once it settles.
 *
 * Cost: CPU time (user + system, from /proc/<pid>/stat) per record of each process over the
 * import: the producer over its whole life (it reports its own at exit: a process that has ended
 * has no /proc entry left to read), and the workers, the redis-server and the sandbox child
 * between the producer's start and its exit. A shared Redis reports its own (INFO cpu), which
 * counts every other client of it too.
 *
 * Upload: from the producer's start until the import recorded its upload received (receivedAt:
 * every record parsed, checked and staged or reported).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { request as undiciRequest } from 'undici';
import { AdminClient } from '../src/admin/client.js';
import { startLocalRedis, type LocalRedis } from '../src/app/local-redis.js';
import type { UserRecord } from '../src/admin/schemas.js';
import { IMPORT_QUEUE } from '../src/queue/import-queue.js';
import { queuePrefix } from '../src/redis/key-tags.js';
import { importIndexKey } from '../src/results/import-keys.js';
import { waitForImport } from '../src/results/import-events.js';
import { ImportStore } from '../src/results/import-store.js';
import { startSandbox } from '../src/sandbox/server.js';
import { freePort } from '../src/util/free-port.js';
import { deleteKeysWithPrefix } from '../src/util/redis.js';
import { costLines, importCost, type ImportCpu } from './lib/import-cost.js';
import { CLOCK_TICKS, cpuSeconds, EXIT_HOOK, exitReport, peakMiB } from './lib/process-cost.js';

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
    stream: { type: 'boolean', default: false },
    via: { type: 'string', default: 'cli' },
    sandbox: { type: 'string', default: 'process' },
    redis: { type: 'string' },
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
const via = values.via;
if (via !== 'cli' && via !== 'api') usage('--via must be cli or api');
if (preseed && mode !== 'upsert') usage('--preseed goes with --mode upsert');
const placement = values.sandbox;
// the producer's and workers' V8 heap ceiling (docs/configuration.md#memory); 0: V8's own, sized
// by the machine's memory, under which a worker keeps ~100 MiB of garbage before collecting it
const heapMb = whole('heap', values.heap, 0);
if (placement !== 'process' && placement !== 'inline') usage('--sandbox must be process or inline');
const redisServerOnPath = ((): boolean => {
  try {
    execSync('command -v redis-server', { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const redisMode = values.redis ?? (redisServerOnPath ? 'private' : 'shared');
if (redisMode !== 'private' && redisMode !== 'shared') usage('--redis must be private or shared');
if (redisMode === 'private' && !redisServerOnPath)
  usage('--redis private needs redis-server on PATH');

const sharedRedisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The Redis of the end-to-end run under way: the shared one, or the run's private one. */
let redisUrl = sharedRedisUrl;
/** The private redis-server of the end-to-end run under way. */
let privateRedis: LocalRedis | undefined;
const prefix = `porter-bench-${process.pid}`;
/** Human lines go to stderr under --json, so stdout is exactly one JSON line. */
const say = (line: string): void => (values.json ? console.error(line) : console.log(line));
const MiB = 1024 * 1024;
const mib = (bytes: number): string => (bytes / MiB).toFixed(1);
/** Bytes per record with its sign: a shared Redis can shrink while the import runs. */
const perRecord = (bytes: number): string =>
  `${bytes >= 0 ? '+' : '−'}${Math.abs(bytes / rows).toFixed(0)} B/record`;
/** CPU seconds as microseconds per record. */
const usPerRecord = (seconds: number): number => (seconds * 1e6) / rows;
/** The upload's seconds and rows per second: from the producer's start, and without start-up. */
function uploadRates(phases: Phases): {
  seconds: number;
  rowsPerSecond: number;
  readAndStageSeconds: number;
  readAndStageRowsPerSecond: number;
} {
  const seconds = phases.startUp + phases.upload;
  return {
    seconds,
    rowsPerSecond: rows / seconds,
    readAndStageSeconds: phases.upload,
    readAndStageRowsPerSecond: rows / phases.upload,
  };
}
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

// ---- child processes ----

/** Where children write their exit reports (lib/process-cost.ts). */
let exitDir = '';
/** Children still running, and the import under way: what SIGINT/SIGTERM cleans up and reports. */
const running = new Set<ChildProcess>();
let importUnderWay: { started: number; lines: string[] } | undefined;
let readiness: Queue | undefined;
/** Set once a signal arrived: the cleanup it runs ends the process. */
let stopping = false;
/** Under --cpu-prof: which process each profile is of ("worker 1234"; its file name holds the pid). */
const profiled: string[] = [];

function porter(
  args: string[],
  env: NodeJS.ProcessEnv,
  output: { stdout: 'ignore' | 'pipe'; stderr?: 'inherit' | 'pipe' },
  label = args[0]!,
): ChildProcess {
  const profile = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
  const heap = heapMb > 0 && args[0] !== 'sandbox' ? [`--max-old-space-size=${heapMb}`] : [];
  const child = spawn(
    'node',
    [...profile, ...heap, '--import', EXIT_HOOK, 'bin/porter.js', ...args],
    {
      env: { ...env, BENCH_EXIT_DIR: exitDir },
      stdio: ['ignore', output.stdout, output.stderr ?? 'inherit'],
    },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (profile.length > 0) profiled.push(`${label} ${child.pid}`);
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
async function openSandbox(run: 'direct' | 'end to end'): Promise<BenchSandbox> {
  if (placement === 'inline') {
    const sandbox = await startSandbox({ port: 0, faults: { latencyMs: latency } });
    return { url: sandbox.url, pid: undefined, close: () => sandbox.close() };
  }
  const args = ['sandbox', '--port', '0', '--latency', String(latency)];
  const env = { ...process.env, LOG_LEVEL: 'warn' };
  const child = porter(args, env, { stdout: 'pipe' }, `sandbox (${run})`);
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
  /** CPU seconds over the POSTs: the sandbox child's (undefined inline), and this process's. */
  cpu: { sandbox: number | undefined; client: number };
}

async function direct(inFlight: number): Promise<DirectResult> {
  const sandbox = await openSandbox('direct');
  const client = new AdminClient({ baseUrl: sandbox.url, connections: inFlight });
  const sandboxBefore = await cpuSeconds(sandbox.pid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  await postAll(client, range, (index) => user(index), inFlight);
  const seconds = (performance.now() - started) / 1000;
  const clientUsage = process.cpuUsage(clientBefore);
  const sandboxAfter = await cpuSeconds(sandbox.pid);
  await client.close();
  await sandbox.close();
  return {
    inFlight,
    seconds,
    rate: rows / seconds,
    sandboxMiB: await peakMiB(exitDir, sandbox.pid),
    cpu: {
      sandbox: difference(sandboxBefore, sandboxAfter),
      client: (clientUsage.user + clientUsage.system) / 1e6,
    },
  };
}

/** after − before, when both were read. */
function difference(before: number | undefined, after: number | undefined): number | undefined {
  return before === undefined || after === undefined ? undefined : after - before;
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

/** CPU seconds a Redis has used: its redis-server's from /proc, or a shared one's INFO cpu. */
async function redisCpuSeconds(redis: Redis): Promise<number | undefined> {
  if (privateRedis) return cpuSeconds(privateRedis.pid);
  const info = await redis.info('cpu');
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  const seconds = field('used_cpu_user') + field('used_cpu_sys');
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** CPU seconds of the processes that run through the import (undefined: could not be read). */
interface RunningCpu {
  workers: (number | undefined)[];
  redis: number | undefined;
  sandbox: number | undefined;
}

async function runningCpu(
  workers: ChildProcess[],
  redis: Redis,
  sandbox: BenchSandbox,
): Promise<RunningCpu> {
  const [redisSeconds, sandboxSeconds, ...workerSeconds] = await Promise.all([
    redisCpuSeconds(redis),
    cpuSeconds(sandbox.pid),
    ...workers.map((worker) => cpuSeconds(worker.pid)),
  ]);
  return { workers: workerSeconds, redis: redisSeconds, sandbox: sandboxSeconds };
}

interface Phases {
  /** The producer's start until the import was created. */
  startUp: number;
  /** Creation until the upload was received: read, checked, staged or reported. */
  upload: number;
  /** Received until the snapshot's read began: queueing and picking up the preparation. */
  prepare?: number;
  snapshot?: number;
  /** The snapshot's end (received, without one) until the import ended. */
  batches: number;
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
  phases?: Phases;
  /**
   * CPU seconds over the import: the producer's whole life (from its exit report, else the last
   * /proc reading before it ended), the others from the producer's start to its exit.
   */
  cpu: ImportCpu & { producerFrom: 'exit report' | 'last reading' | 'api' };
  /**
   * The import's span on the machine's monotonic clock (µs), the clock of V8's CPU profiles:
   * `profile-summary --from --to` counts it alone.
   */
  window: { fromUs: number; toUs: number };
  users: number;
  /** The producer's last line: the import's summary. */
  summary: string;
}

async function endToEnd(file: string, workerCount: number): Promise<EndToEndResult> {
  if (redisMode === 'private') {
    privateRedis = await startLocalRedis();
    if (!privateRedis) throw new Error('redis-server did not start');
    redisUrl = privateRedis.url;
  }
  const sandbox = await openSandbox('end to end').catch(async (error: unknown) => {
    await cleanUpRedis();
    throw error;
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const workers: ChildProcess[] = [];
  let api: RunningApi | undefined;
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
    // --via api: the producer is a running `porter api`, started (like the workers) before the
    // timing; the import is one HTTP request with the file as its body
    if (via === 'api') api = await startApi(env);
    // Start-up (tsx loading the sources) is left out of the timing: the import starts once
    // every worker listens. Each worker process holds at least one named connection.
    await workersReady(workerCount, workers);

    // A shared Redis serves other work too: anything else writing to it while this runs skews
    // these three readings, and so the bytes per record derived from them.
    const beforeBytes = await usedMemory(redis);
    let peakBytes = beforeBytes;
    let producerMiB = 0;
    let producerCpu = 0;
    const args = ['import', file, '--resource', 'users', '--mode', mode];
    args.push('--batch-size', String(batchSize), '--wait');
    if (lookup !== undefined) args.push('--lookup', lookup);
    if (values.stream) args.push('--stream');
    const cpuBefore = await runningCpu(workers, redis, sandbox);
    const apiCpuBefore = api ? ((await cpuSeconds(api.child.pid)) ?? 0) : 0;
    const fromUs = monotonicUs();
    const started = performance.now();
    const producer = api
      ? submitToApi(api, file, redis)
      : porter(args, env, { stdout: 'ignore', stderr: 'pipe' }, 'producer');
    const producerLines = producer instanceof Promise ? [] : tail(producer);
    importUnderWay = { started, lines: producerLines };
    const sampler = setInterval(() => {
      void usedMemory(redis).then((bytes) => (peakBytes = Math.max(peakBytes, bytes)));
      if (producer instanceof Promise) return;
      void peakMiB(exitDir, producer.pid).then(
        (value) => (producerMiB = Math.max(producerMiB, value)),
      );
      void cpuSeconds(producer.pid).then(
        (value) => (producerCpu = Math.max(producerCpu, value ?? 0)),
      );
    }, 200);
    // 'close': exited, and its stderr read to the end
    const [code] =
      producer instanceof Promise
        ? [await producer]
        : ((await once(producer, 'close')) as [number | null]);
    const seconds = (performance.now() - started) / 1000;
    const toUs = monotonicUs();
    const cpuAfter = await runningCpu(workers, redis, sandbox);
    clearInterval(sampler);
    importUnderWay = undefined;
    if (code !== 0) {
      if (!stopping) console.error(producerLines.join('\n'));
      throw new Error(`porter import exited ${code}`);
    }
    if (api) {
      // the API's CPU over the import; it runs on
      producerCpu = ((await cpuSeconds(api.child.pid)) ?? 0) - apiCpuBefore;
      producerMiB = await peakMiB(exitDir, api.child.pid);
      await stop(api.child);
    }
    const producerExit =
      producer instanceof Promise ? undefined : await exitReport(exitDir, producer.pid);
    peakBytes = Math.max(peakBytes, await usedMemory(redis));
    const settledBytes = await settledMemory(redis);
    const own = await ownKeys(redis);
    const phases = await importPhases(redis, started);
    producerMiB = Math.max(producerMiB, producerExit?.peakMiB ?? 0);

    await Promise.all(workers.map((worker) => stop(worker)));
    const workerMiB = await Promise.all(workers.map((worker) => peakMiB(exitDir, worker.pid)));
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
      sandboxMiB: await peakMiB(exitDir, sandbox.pid),
      redis: { beforeBytes, peakBytes, settledBytes },
      own,
      phases,
      cpu: {
        producer: producerExit?.cpuSeconds ?? producerCpu,
        producerFrom: api ? 'api' : producerExit ? 'exit report' : 'last reading',
        workers: cpuAfter.workers.map((after, n) => difference(cpuBefore.workers[n], after)),
        redis: difference(cpuBefore.redis, cpuAfter.redis),
        sandbox: difference(cpuBefore.sandbox, cpuAfter.sandbox),
      },
      window: { fromUs, toUs },
      users: counted.users,
      summary: api
        ? `submitted to porter api: ${counted.users} users`
        : (producerLines.at(-1) ?? ''),
    };
  } finally {
    // the API too, when the import failed before it was stopped
    await Promise.all([...workers, ...(api ? [api.child] : [])].map((child) => stop(child)));
    await sandbox.close();
    redis.disconnect();
    await cleanUpRedis();
  }
}

interface RunningApi {
  child: ChildProcess;
  url: string;
  token: string;
}

/** `porter api` on a free port, with a token of its own; once it answers /readyz. */
async function startApi(env: NodeJS.ProcessEnv): Promise<RunningApi> {
  const port = await freePort();
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const child = porter(
    ['api', '--port', String(port)],
    { ...env, PORTER_API_TOKEN: token },
    { stdout: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error('porter api exited');
      const ready = await fetch(`${url}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) return { child, url, token };
      if (Date.now() > deadline) throw new Error('porter api not ready after 120 s');
      await sleep(100);
    }
  } catch (error) {
    await stop(child);
    throw error;
  }
}

/**
 * The file as one raw text/csv upload to the API, with the options the CLI run passes; resolves
 * with 0 once the import settled (as `porter import --wait` exits), 1 when it was refused.
 */
async function submitToApi(api: RunningApi, file: string, redis: Redis): Promise<number> {
  const query = new URLSearchParams({ resource: 'users', mode, batchSize: String(batchSize) });
  if (lookup !== undefined) query.set('lookup', lookup);
  if (values.stream) query.set('stream', 'true');
  const answer = await undiciRequest(`${api.url}/v1/imports?${query}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.token}`,
      'content-type': 'text/csv',
      'content-length': String((await stat(file)).size),
    },
    body: createReadStream(file),
  });
  const body = (await answer.body.json()) as { id?: string };
  if (answer.statusCode !== 202 || body.id === undefined) {
    console.error(`the API refused the upload: ${answer.statusCode} ${JSON.stringify(body)}`);
    return 1;
  }
  const subscriber = redis.duplicate();
  try {
    await waitForImport(new ImportStore({ redis, prefix }), subscriber, body.id);
    return 0;
  } finally {
    subscriber.disconnect();
  }
}

/** Microseconds on CLOCK_MONOTONIC, which V8's CPU profiles count in too. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The bench's keys in a shared Redis go; a private redis-server stops. */
async function cleanUpRedis(): Promise<void> {
  if (redisMode === 'shared') {
    await deleteKeysWithPrefix(redisUrl, prefix);
    return;
  }
  const server = privateRedis;
  privateRedis = undefined;
  redisUrl = sharedRedisUrl;
  await server?.stop();
}

/**
 * Where the end-to-end seconds went, from the import's own record: start-up until the import
 * was created, the upload until it was received, the preparation until the snapshot's read
 * began, the read, then the batches until the import ended.
 */
async function importPhases(redis: Redis, started: number): Promise<Phases | undefined> {
  const [id] = await redis.zrange(importIndexKey(prefix), '0', '0');
  if (id === undefined) return undefined;
  const store = new ImportStore({ redis, prefix });
  const info = await store.get(id);
  if (!info?.finishedAt || !info.receivedAt) return undefined;
  const startedAt = performance.timeOrigin + started;
  const created = Date.parse(info.createdAt);
  const received = Date.parse(info.receivedAt);
  const phases: Phases = {
    startUp: (created - startedAt) / 1000,
    upload: (received - created) / 1000,
    batches: (Date.parse(info.finishedAt) - received) / 1000,
  };
  const takenAt = info.lookup?.takenAt;
  // a streamed import is prepared while its upload is read, and sends while it is: its batches'
  // time is what is left after the upload
  if (takenAt && info.options.stream !== true) {
    phases.prepare = (Date.parse(takenAt) - received) / 1000;
    phases.snapshot = (info.lookup?.durationMs ?? 0) / 1000;
    phases.batches -= phases.prepare + phases.snapshot;
  }
  return phases;
}

// ---- run ----

const dir = await mkdtemp(join(tmpdir(), 'porter-bench-'));
exitDir = join(dir, 'exit');
await mkdir(exitDir);

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
  await cleanUpRedis();
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
      `mode ${mode}${preseed ? ' (half preseeded)' : ''}, lookup ${lookup ?? '(not passed)'}${values.stream ? ', streamed' : ''}, ` +
      `heap ceiling of producer and workers ${heapMb > 0 ? `${heapMb} MiB` : "V8's default"}`,
  );
  say(
    `sandbox: ${placement === 'process' ? 'own child process (porter sandbox) for direct and end to end' : 'inline, in this bench process, for direct and end to end'}; ` +
      `Redis: ${redisMode === 'private' ? 'a private redis-server per end-to-end run' : `shared, at ${sharedRedisUrl}`}; ` +
      `${cpus().length} cores, load ${load} at start`,
  );
  const points: { direct: DirectResult; endToEnd: EndToEndResult }[] = [];
  for (const workerCount of curve) {
    say(`\n${workerCount} worker${workerCount > 1 ? 's' : ''} × concurrency ${concurrency}:`);
    const directResult = await direct(workerCount * concurrency);
    say(
      `  direct POSTs, ${directResult.inFlight} in flight (no queue, no lookups): ${directResult.rate.toFixed(0)} records/s (${directResult.seconds.toFixed(1)} s)`,
    );
    if (directResult.cpu.sandbox !== undefined) {
      say(
        `    CPU per record: sandbox ${usPerRecord(directResult.cpu.sandbox).toFixed(1)} µs, ` +
          `the direct client (this process) ${usPerRecord(directResult.cpu.client).toFixed(1)} µs`,
      );
    }
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
      const { startUp, upload, prepare, snapshot, batches } = e2e.phases;
      const waits =
        prepare === undefined || snapshot === undefined
          ? ''
          : `, preparation ${prepare.toFixed(1)} s, snapshot read ${snapshot.toFixed(1)} s`;
      say(
        `  phases: start-up ${startUp.toFixed(1)} s, upload ${upload.toFixed(1)} s${waits}, batches ${batches.toFixed(1)} s (${(rows / batches).toFixed(0)} records/s)`,
      );
      const rates = uploadRates(e2e.phases);
      say(
        `  upload: every row staged ${rates.seconds.toFixed(2)} s after the producer's start = ${rates.rowsPerSecond.toFixed(0)} rows/s ` +
          `(read, checked and staged in ${rates.readAndStageSeconds.toFixed(2)} s = ${rates.readAndStageRowsPerSecond.toFixed(0)} rows/s, after ${startUp.toFixed(2)} s of start-up)`,
      );
    }
    say(
      `  Redis keys under the bench prefix once settled: ${e2e.own.keys} keys, ${mib(e2e.own.bytes)} MiB (${perRecord(e2e.own.bytes)})`,
    );
    say(
      `  CPU per record (user + system, ${CLOCK_TICKS} ticks/s; the producer's ${e2e.cpu.producerFrom === 'exit report' ? 'from its exit' : e2e.cpu.producerFrom === 'api' ? 'over the import' : 'last read while it ran'}):`,
    );
    const labels = {
      redis:
        redisMode === 'private'
          ? 'redis-server (private)'
          : 'Redis (shared: every client of it counts)',
      sandbox:
        placement === 'process' ? 'sandbox (porter sandbox)' : 'sandbox (inline: not measured)',
      producer: via === 'api' ? 'producer (porter api, over the import)' : undefined,
    };
    for (const line of costLines(importCost(e2e.cpu, rows), labels)) say(`    ${line}`);
    if (values['cpu-prof']) {
      say(
        `  the import in the CPU profiles: --from ${e2e.window.fromUs} --to ${e2e.window.toUs} (bench/profile-summary.ts)`,
      );
    }
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
  if (profiled.length > 0) {
    say(`\nCPU profiles in ${values['cpu-prof']}, by process id: ${profiled.join(', ')}`);
    say(
      '(npx tsx bench/profile-summary.ts FILE.cpuprofile [--from µs --to µs]: where the time went)',
    );
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
        redis: redisMode,
        clockTicksPerSecond: CLOCK_TICKS,
        cores: cpus().length,
        loadAtStart: Number(load),
        points: points.map(({ direct: directResult, endToEnd: e2e }) => ({
          workers: e2e.workers,
          direct: {
            inFlight: directResult.inFlight,
            seconds: directResult.seconds,
            recordsPerSecond: directResult.rate,
            sandboxPeakMiB: directResult.sandboxMiB || null,
            cpuMicrosecondsPerRecord: {
              sandbox:
                directResult.cpu.sandbox === undefined
                  ? null
                  : usPerRecord(directResult.cpu.sandbox),
              client: usPerRecord(directResult.cpu.client),
            },
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
            phases: e2e.phases ?? null,
            upload: e2e.phases ? uploadRates(e2e.phases) : null,
            cpuSeconds: {
              ...e2e.cpu,
              workers: e2e.cpu.workers.map((value) => value ?? null),
              redis: e2e.cpu.redis ?? null,
              sandbox: e2e.cpu.sandbox ?? null,
            },
            cpuMicrosecondsPerRecord: importCost(e2e.cpu, rows),
            monotonicWindowUs: e2e.window,
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
  await cleanUpRedis();
}
