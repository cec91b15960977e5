/**
 * Many imports of one target started at once: M upsert imports of R users each, submitted
 * together to ONE `porter worker --concurrency C` process, against a sandbox seeded with a
 * directory of N users. Each import's preparation reads the directory in bulk (a snapshot, or
 * the look-alike scan of record-by-record lookups); the bench counts how many full-directory
 * reads the sandbox served, and what they cost the worker in memory and CPU.
 *
 *   npx tsx bench/concurrent-imports.ts [--directory 200000] [--imports 20] [--rows 5000]
 *       [--concurrency 20] [--batch-size 100] [--lookup auto|snapshot|each] [--latency MS]
 *       [--timeout S] [--json]
 *
 * Processes: a private redis-server on a free port (redis-server must be on PATH), a sandbox
 * (`porter sandbox --seed-users N`, its own process), one `porter worker`, and this process:
 * the producer side (the imports are submitted from here with startImport, as
 * bench/import-rig.ts does) and a counting proxy in front of the sandbox, which the worker is
 * pointed at. The proxy classifies every call: a GET of userManager (groupManager) with neither
 * an id nor a name in its query is a full-directory read of users (groups); the bytes of its
 * answer are counted, and how many were in flight at once.
 *
 * The imports: disjoint slices of the seeded usernames (read once straight from the sandbox
 * before anything starts, not through the proxy; plain "General User"s only), each with its
 * `dept` changed, in mode upsert, so look-alike checks and the snapshot apply and every record
 * is an update. --lookup is passed on when given; otherwise the import keeps porter's default
 * (auto, which takes the snapshot: an upsert compares new keys with every key on the server).
 *
 * Figures: full-directory reads (and their bytes, most in flight at once), the worker's peak
 * RSS (VmHWM at the end, beside its RSS sampled every 100 ms and its RSS idle before the
 * imports), CPU seconds (user + system from /proc/<pid>/stat) of the worker, the sandbox, the
 * redis-server and this process over the imports, wall time from the submissions until every
 * import settled, per-import duration (created → finished: mean and max), the snapshot read's
 * duration per import, records per second, and the imports' counts summed. Every record must
 * succeed: succeeded = R × M, failed 0, unprocessed 0, and the sandbox must hold R × M users
 * with the changed `dept`; otherwise a FAIL line, and exit code 1.
 *
 * It uses only APIs that have existed in src since the import pipeline began (startLocalRedis,
 * createPorterContext, startImport, AdminClient, `porter sandbox --seed-users`, `porter
 * worker --concurrency`), and nothing of bench/lib or test/helpers, so it runs unchanged on an
 * older tree: copy it in and compare.
 *
 * --json prints the human lines on stderr and one JSON line of every figure on stdout.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { AdminClient } from '../src/admin/client.js';
import { createPorterContext, type PorterContext } from '../src/app/context.js';
import { startImport } from '../src/app/imports.js';
import { startLocalRedis, type LocalRedis } from '../src/app/local-redis.js';
import { loadEnv } from '../src/config/env.js';
import type { ImportInfo, ImportOptions } from '../src/model/import.js';
import { silentLogger } from '../src/util/logger.js';

const { values } = parseArgs({
  options: {
    directory: { type: 'string', default: '200000' },
    imports: { type: 'string', default: '20' },
    rows: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '20' },
    'batch-size': { type: 'string', default: '100' },
    lookup: { type: 'string' },
    latency: { type: 'string', default: '0' },
    timeout: { type: 'string', default: '1800' },
    json: { type: 'boolean', default: false },
  },
});

function usage(message: string): never {
  console.error(`concurrent-imports: ${message}`);
  process.exit(64);
}
function whole(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min) usage(`--${name} must be a whole number ≥ ${min}`);
  return value;
}

const directorySize = whole('directory', values.directory, 1);
const importCount = whole('imports', values.imports, 1);
const rows = whole('rows', values.rows, 1);
const concurrency = whole('concurrency', values.concurrency, 1);
const batchSize = whole('batch-size', values['batch-size'], 1);
const latency = whole('latency', values.latency, 0);
const timeoutMs = whole('timeout', values.timeout, 1) * 1000;
const lookup = values.lookup as ImportOptions['lookup'];
if (lookup !== undefined && !['auto', 'snapshot', 'each'].includes(lookup)) {
  usage('--lookup must be auto, snapshot or each');
}
const total = rows * importCount;
if (total > directorySize) {
  usage(`--rows × --imports (${total}) must not exceed --directory (${directorySize})`);
}

/** Human lines go to stderr under --json, so stdout is exactly one JSON line. */
const say = (line: string): void => (values.json ? console.error(line) : console.log(line));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = 1024 * 1024;
/** The changed field's value of import m (0-based): no seeded department is named so. */
const deptOf = (m: number): string => `Bench import ${m + 1}`;

// ---- /proc ----

/** Clock ticks per second of utime and stime in /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = ((): number => {
  try {
    const ticks = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim());
    return ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a running process in seconds; undefined once it is gone. */
async function cpuSeconds(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** A field of /proc/<pid>/status in MiB (VmRSS, VmHWM); 0 once the process is gone. */
async function statusMiB(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kB = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
    return kB ? Number(kB) / 1024 : 0;
  } catch {
    return 0;
  }
}

// ---- the counting proxy ----

interface Calls {
  /** Full-directory reads, per resource, and the bytes of their answers. */
  fullReads: { users: number; groups: number; acls: number };
  fullReadBytes: { users: number; groups: number; acls: number };
  /** Full reads of users answered 2xx to their end (the others failed or were dropped). */
  userReadsAnswered: number;
  /** Most full reads of users in flight at once. */
  mostUserReadsAtOnce: number;
  /** GETs naming a record (userId, username, groupId, name). */
  recordReads: number;
  writes: number;
  other: number;
}

const emptyCalls = (): Calls => ({
  fullReads: { users: 0, groups: 0, acls: 0 },
  fullReadBytes: { users: 0, groups: 0, acls: 0 },
  userReadsAnswered: 0,
  mostUserReadsAtOnce: 0,
  recordReads: 0,
  writes: 0,
  other: 0,
});

const RESOURCE_OF_PATH: Record<string, 'users' | 'groups' | 'acls'> = {
  userManager: 'users',
  groupManager: 'groups',
  aclManager: 'acls',
};
/** Query parameters that name one record (or a group's ACLs): a GET with one is not a full read. */
const RECORD_PARAMS = ['userId', 'username', 'groupId', 'name', 'id'];

interface CountingProxy {
  url: string;
  calls: Calls;
  close(): void;
}

async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  const target = new URL(targetUrl);
  const proxy: CountingProxy = { url: '', calls: emptyCalls(), close: () => {} };
  let userReadsInFlight = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? '/', 'http://proxy');
    const last = url.pathname.replace(/\/+$/, '').split('/').at(-1) ?? '';
    const resource = RESOURCE_OF_PATH[last];
    const calls = proxy.calls;
    let full: 'users' | 'groups' | 'acls' | undefined;
    if (incoming.method === 'GET' && resource) {
      if (RECORD_PARAMS.some((name) => url.searchParams.has(name))) calls.recordReads++;
      else full = resource;
    } else if (resource) {
      calls.writes++;
    } else {
      calls.other++;
    }
    if (full) {
      calls.fullReads[full]++;
      if (full === 'users') {
        userReadsInFlight++;
        calls.mostUserReadsAtOnce = Math.max(calls.mostUserReadsAtOnce, userReadsInFlight);
      }
    }
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      if (full === 'users') userReadsInFlight--;
    };
    const onward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        if (full) {
          const resourceRead = full;
          answer.on('data', (chunk: Buffer) => {
            proxy.calls.fullReadBytes[resourceRead] += chunk.length;
          });
        }
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          if (full === 'users' && status >= 200 && status < 300) proxy.calls.userReadsAnswered++;
          end();
        });
        answer.on('close', end);
        answer.pipe(outgoing);
      },
    );
    onward.on('error', () => {
      end();
      outgoing.destroy();
    });
    outgoing.on('close', () => {
      // the client went away (an aborted read): stop reading the server's answer for it
      if (!outgoing.writableFinished) onward.destroy();
      end();
    });
    incoming.pipe(onward);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => {
    server.closeAllConnections();
    server.close();
  };
  return proxy;
}

// ---- child processes ----

const children = new Set<ChildProcess>();

function porter(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn('node', ['bin/porter.js', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** The last lines a child wrote (stdout and stderr), for a failure's story. */
function keepTail(child: ChildProcess, keep = 40): string[] {
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        if (!line) continue;
        lines.push(line);
        if (lines.length > keep) lines.shift();
      }
    });
  }
  return lines;
}

/** SIGTERM, then SIGKILL after `ms`; resolves once it exited. */
async function stop(child: ChildProcess | undefined, ms = 30_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(timer);
}

/** `porter sandbox --seed-users N` on a free port; resolves with its URL once it listens. */
async function startSandboxProcess(): Promise<{ child: ChildProcess; url: string }> {
  const args = ['sandbox', '--port', '0', '--seed-users', String(directorySize)];
  if (latency > 0) args.push('--latency', String(latency));
  const child = porter(args, { ...process.env, LOG_LEVEL: 'warn' });
  const tail = keepTail(child);
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (\S+)/.exec(seen);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`sandbox exited ${code} before listening:\n${tail.join('\n')}`)),
    );
  });
  return { child, url };
}

// ---- the run ----

interface ImportFigures {
  id: string;
  state: string;
  counts: ImportInfo['counts'];
  durationMs: number | undefined;
  lookup: ImportInfo['lookup'];
}

interface Result {
  ok: boolean;
  problems: string[];
  wallSeconds: number;
  submitSeconds: number;
  calls: Calls;
  worker: {
    idleRssMiB: number;
    peakRssMiB: number;
    sampledPeakRssMiB: number;
    cpuSeconds: number | undefined;
  };
  sandbox: { peakRssMiB: number; cpuSeconds: number | undefined };
  redis: { peakRssMiB: number; cpuSeconds: number | undefined };
  benchCpuSeconds: number;
  imports: ImportFigures[];
  updatedOnServer: number;
}

let redisServer: LocalRedis | undefined;
let sandboxChild: ChildProcess | undefined;
let workerChild: ChildProcess | undefined;
let proxy: CountingProxy | undefined;
let context: PorterContext | undefined;
let cleaning: Promise<void> | undefined;

function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await stop(workerChild);
    await context?.close().catch(() => {});
    proxy?.close();
    await stop(sandboxChild);
    await Promise.all([...children].map((child) => stop(child, 5_000)));
    await redisServer?.stop();
  })();
  return cleaning;
}

/** `count` usernames of plain users from the directory, read straight from the sandbox. */
async function seededUsernames(sandboxUrl: string, count: number): Promise<string[]> {
  const client = new AdminClient({ baseUrl: sandboxUrl, connections: 1 });
  const names: string[] = [];
  try {
    for await (const batch of client.streamBatches('users')) {
      for (const user of batch) {
        // plain users with plain names: no administrator (changing one is a question of its
        // own), no name a CSV would have to quote
        if (user.type !== 'General User' || !/^[\w.-]+$/.test(user.username ?? '')) continue;
        if (names.length < count) names.push(user.username!);
      }
    }
  } finally {
    await client.close();
  }
  return names;
}

/** Users on the server whose dept is one the imports set. */
async function updatedUsers(sandboxUrl: string): Promise<number> {
  const client = new AdminClient({ baseUrl: sandboxUrl, connections: 1 });
  let updated = 0;
  try {
    for await (const batch of client.streamBatches('users')) {
      for (const user of batch) if (user.dept?.startsWith('Bench import ')) updated++;
    }
  } finally {
    await client.close();
  }
  return updated;
}

async function run(): Promise<Result> {
  redisServer = await startLocalRedis();
  if (!redisServer) throw new Error('redis-server is not on PATH');
  const seedStarted = performance.now();
  const sandbox = await startSandboxProcess();
  sandboxChild = sandbox.child;
  say(
    `sandbox seeded with ${directorySize} users and listening in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );
  const names = await seededUsernames(sandbox.url, total);
  if (names.length < total) {
    throw new Error(
      `the directory holds ${names.length} plain users, fewer than --rows × --imports (${total})`,
    );
  }
  proxy = await startCountingProxy(sandbox.url);
  const env: Record<string, string> = {
    REDIS_URL: redisServer.url,
    PORTER_PREFIX: `porter-bench-concurrent-${process.pid}`,
    ADMIN_BASE_URL: proxy.url,
    LOG_LEVEL: 'warn',
  };
  context = await createPorterContext(loadEnv(env), { logger: silentLogger });
  workerChild = porter(['worker', '--concurrency', String(concurrency)], {
    ...process.env,
    ...env,
  });
  const worker = workerChild;
  const workerTail = keepTail(worker);
  const workerExited = once(worker, 'exit');
  const readyBy = Date.now() + 120_000;
  while ((await context.importQueue.getWorkersCount()) < 1) {
    if (worker.exitCode !== null) throw new Error(`worker exited:\n${workerTail.join('\n')}`);
    if (Date.now() > readyBy) throw new Error('the worker is not ready after 120 s');
    await sleep(50);
  }
  // the worker's memory idle, after start-up: what the imports add is above it
  await sleep(500);
  const idleRssMiB = await statusMiB(worker.pid, 'VmRSS');

  const uploads = Array.from({ length: importCount }, (_, m) => {
    const slice = names.slice(m * rows, (m + 1) * rows);
    return `username,dept\n${slice.map((name) => `${name},${deptOf(m)}`).join('\n')}\n`;
  });
  proxy.calls = emptyCalls();
  const cpuBefore = await Promise.all(
    [worker.pid, sandbox.child.pid, redisServer.pid].map(cpuSeconds),
  );
  const benchBefore = process.cpuUsage();
  let sampledPeakRssMiB = idleRssMiB;
  const sampler = setInterval(() => {
    void statusMiB(worker.pid, 'VmRSS').then((mib) => {
      sampledPeakRssMiB = Math.max(sampledPeakRssMiB, mib);
    });
  }, 100);

  const started = performance.now();
  const ctx = context;
  const submitted = await Promise.all(
    uploads.map((text, m) =>
      startImport(ctx, {
        options: {
          resource: 'users',
          mode: 'upsert',
          batchSize,
          listSeparator: '|',
          emptyAsClear: false,
          allowAdmin: false,
          ...(lookup === undefined ? {} : { lookup }),
        },
        source: Readable.from([Buffer.from(text)]),
        fileName: `concurrent-${m + 1}.csv`,
      }),
    ),
  );
  const submitSeconds = (performance.now() - started) / 1000;
  const ids = submitted.map((info) => info.id);
  say(
    `${importCount} imports of ${rows} users submitted in ${submitSeconds.toFixed(2)} s; waiting for them to settle`,
  );

  const settled = new Map<string, ImportInfo>();
  const deadline = Date.now() + timeoutMs;
  let lastWord = Date.now();
  let timedOut = false;
  while (settled.size < ids.length) {
    if (worker.exitCode !== null || worker.signalCode !== null) break;
    if (Date.now() > deadline) {
      timedOut = true;
      break;
    }
    const waiting = ids.filter((id) => !settled.has(id));
    const infos = await Promise.all(waiting.map((id) => ctx.store.get(id)));
    for (const info of infos) if (info?.settled) settled.set(info.id, info);
    if (Date.now() - lastWord > 10_000) {
      lastWord = Date.now();
      const done = infos.reduce((sum, info) => sum + (info?.done ?? 0), 0);
      say(
        `  ${((performance.now() - started) / 1000).toFixed(0)} s: ${settled.size}/${ids.length} settled; ` +
          `${proxy.calls.fullReads.users} full reads so far; worker RSS ${(await statusMiB(worker.pid, 'VmRSS')).toFixed(0)} MiB; ` +
          `${done} records done in the imports not settled`,
      );
    }
    if (settled.size < ids.length) await sleep(100);
  }
  const wallSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const benchUsage = process.cpuUsage(benchBefore);
  const cpuAfter = await Promise.all(
    [worker.pid, sandbox.child.pid, redisServer.pid].map(cpuSeconds),
  );
  const peaks = await Promise.all(
    [worker.pid, sandbox.child.pid, redisServer.pid].map((pid) => statusMiB(pid, 'VmHWM')),
  );
  sampledPeakRssMiB = Math.max(sampledPeakRssMiB, await statusMiB(worker.pid, 'VmRSS'));
  const calls = proxy.calls;

  const problems: string[] = [];
  if (timedOut) problems.push(`not every import settled within ${timeoutMs / 1000} s`);
  if (worker.exitCode !== null || worker.signalCode !== null) {
    problems.push(
      `the worker exited (${worker.exitCode ?? worker.signalCode}):\n${workerTail.join('\n')}`,
    );
  }
  const imports: ImportFigures[] = [];
  for (const id of ids) {
    const info = settled.get(id) ?? (await ctx.store.get(id));
    if (!info) {
      problems.push(`import ${id} is gone`);
      continue;
    }
    imports.push({
      id,
      state: info.state,
      counts: info.counts,
      durationMs: info.finishedAt
        ? Date.parse(info.finishedAt) - Date.parse(info.createdAt)
        : undefined,
      lookup: info.lookup,
    });
    for (const problem of info.problems ?? []) {
      problems.push(`import ${id}: ${problem.count} ${problem.status} ${problem.code}`);
    }
  }
  await stop(worker);
  await workerExited;
  const updatedOnServer = await updatedUsers(sandbox.url);
  const cpu = (n: number): number | undefined =>
    cpuBefore[n] === undefined || cpuAfter[n] === undefined
      ? undefined
      : cpuAfter[n] - cpuBefore[n];
  return {
    ok: problems.length === 0,
    problems,
    wallSeconds,
    submitSeconds,
    calls,
    worker: { idleRssMiB, peakRssMiB: peaks[0]!, sampledPeakRssMiB, cpuSeconds: cpu(0) },
    sandbox: { peakRssMiB: peaks[1]!, cpuSeconds: cpu(1) },
    redis: { peakRssMiB: peaks[2]!, cpuSeconds: cpu(2) },
    benchCpuSeconds: (benchUsage.user + benchUsage.system) / 1e6,
    imports,
    updatedOnServer,
  };
}

function stats(values: number[]): { mean: number; max: number } | undefined {
  if (values.length === 0) return undefined;
  return {
    mean: values.reduce((sum, value) => sum + value, 0) / values.length,
    max: Math.max(...values),
  };
}
const seconds = (ms: number | undefined): string =>
  ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(2)} s`;
const cpuText = (value: number | undefined): string =>
  value === undefined ? 'n/a' : `${value.toFixed(1)} s`;

let stopping = false;
async function interrupted(signal: NodeJS.Signals): Promise<void> {
  // npx and tsx pass a signal on too: a repeat must not cut the cleanup short
  if (stopping) return;
  stopping = true;
  say(`\n${signal}: stopping`);
  await cleanUp();
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
process.on('SIGINT', (signal) => void interrupted(signal));
process.on('SIGTERM', (signal) => void interrupted(signal));

const load = loadavg()[0]!.toFixed(2);
say(
  `directory ${directorySize} users; ${importCount} imports × ${rows} users (upsert, disjoint slices, dept changed), ` +
    `batch size ${batchSize}; one worker, --concurrency ${concurrency}; lookup ${lookup ?? '(not passed: auto)'}; ` +
    `latency ${latency} ms; ${cpus().length} cores, load ${load} at start`,
);
let result: Result;
try {
  result = await run();
} finally {
  await cleanUp();
}

const counts = { succeeded: 0, failed: 0, skipped: 0, unprocessed: 0, planned: 0 };
for (const figures of result.imports) {
  for (const status of Object.keys(counts) as (keyof typeof counts)[]) {
    counts[status] += figures.counts[status] ?? 0;
  }
}
const countsOk =
  counts.succeeded === total &&
  counts.failed === 0 &&
  counts.unprocessed === 0 &&
  result.imports.length === importCount;
const serverOk = result.updatedOnServer === total;
const durations = stats(
  result.imports.flatMap((figures) =>
    figures.durationMs === undefined ? [] : [figures.durationMs],
  ),
);
const snapshotReads = stats(
  result.imports.flatMap((figures) =>
    figures.lookup?.durationMs === undefined ? [] : [figures.lookup.durationMs],
  ),
);
const modes = new Map<string, number>();
for (const figures of result.imports) {
  const mode = figures.lookup ? `${figures.lookup.mode} (${figures.lookup.why})` : 'none';
  modes.set(mode, (modes.get(mode) ?? 0) + 1);
}
const { calls } = result;
const perRead = calls.fullReads.users > 0 ? calls.fullReadBytes.users / calls.fullReads.users : 0;
const rate = total / result.wallSeconds;

say('');
say(
  `directory reads (full GET of users): ${calls.fullReads.users} for ${importCount} imports, ` +
    `${(perRead / MiB).toFixed(1)} MiB each, ${(calls.fullReadBytes.users / MiB).toFixed(0)} MiB in all, ` +
    `at most ${calls.mostUserReadsAtOnce} at once` +
    (calls.userReadsAnswered === calls.fullReads.users
      ? ''
      : ` (${calls.userReadsAnswered} of them answered whole)`),
);
say(
  `  other calls: ${calls.fullReads.groups} full reads of groups, ${calls.fullReads.acls} of ACLs, ` +
    `${calls.recordReads} reads of one record, ${calls.writes} writes`,
);
say(
  `worker peak RSS: ${result.worker.peakRssMiB.toFixed(0)} MiB (VmHWM; sampled every 100 ms ${result.worker.sampledPeakRssMiB.toFixed(0)} MiB; idle before the imports ${result.worker.idleRssMiB.toFixed(0)} MiB)`,
);
say(
  `CPU over the imports: worker ${cpuText(result.worker.cpuSeconds)}, sandbox ${cpuText(result.sandbox.cpuSeconds)}, ` +
    `redis-server ${cpuText(result.redis.cpuSeconds)}, this process (submissions, proxy, polling) ${cpuText(result.benchCpuSeconds)}`,
);
say(
  `peak RSS of the others: sandbox ${result.sandbox.peakRssMiB.toFixed(0)} MiB, redis-server ${result.redis.peakRssMiB.toFixed(0)} MiB`,
);
say(
  `wall time until every import settled: ${result.wallSeconds.toFixed(1)} s (submissions ${result.submitSeconds.toFixed(2)} s of it) = ${rate.toFixed(0)} records/s`,
);
say(
  `per import, created → finished: mean ${seconds(durations?.mean)}, max ${seconds(durations?.max)}; ` +
    `snapshot read: mean ${seconds(snapshotReads?.mean)}, max ${seconds(snapshotReads?.max)}`,
);
say(`lookup: ${[...modes].map(([mode, n]) => `${n} × ${mode}`).join('; ')}`);
say(
  `counts of all imports: succeeded ${counts.succeeded}, failed ${counts.failed}, unprocessed ${counts.unprocessed}` +
    `${counts.skipped ? `, skipped ${counts.skipped}` : ''} (expected ${total} / 0 / 0); ` +
    `users on the server with the imported dept: ${result.updatedOnServer}`,
);
const ok = result.ok && countsOk && serverOk;
if (!ok) {
  const why = [
    ...(countsOk
      ? []
      : [
          `counts ${counts.succeeded} / ${counts.failed} / ${counts.unprocessed} over ${result.imports.length} imports, expected ${total} / 0 / 0 over ${importCount}`,
        ]),
    ...(serverOk
      ? []
      : [`${result.updatedOnServer} users updated on the server, expected ${total}`]),
    ...result.problems,
  ];
  say(`FAIL: ${why.join('; ')}`);
}
if (values.json) {
  console.log(
    JSON.stringify({
      ok,
      directory: directorySize,
      imports: importCount,
      rows,
      concurrency,
      batchSize,
      lookup: lookup ?? null,
      latencyMs: latency,
      cores: cpus().length,
      loadAtStart: Number(load),
      directoryReads: calls.fullReads.users,
      directoryReadBytes: calls.fullReadBytes.users,
      directoryReadsAtOnce: calls.mostUserReadsAtOnce,
      calls,
      workerPeakRssMiB: result.worker.peakRssMiB,
      workerSampledPeakRssMiB: result.worker.sampledPeakRssMiB,
      workerIdleRssMiB: result.worker.idleRssMiB,
      cpuSeconds: {
        worker: result.worker.cpuSeconds ?? null,
        sandbox: result.sandbox.cpuSeconds ?? null,
        redis: result.redis.cpuSeconds ?? null,
        bench: result.benchCpuSeconds,
      },
      sandboxPeakRssMiB: result.sandbox.peakRssMiB,
      redisPeakRssMiB: result.redis.peakRssMiB,
      wallSeconds: result.wallSeconds,
      submitSeconds: result.submitSeconds,
      recordsPerSecond: rate,
      importDurationMs: durations ?? null,
      snapshotReadMs: snapshotReads ?? null,
      counts,
      updatedOnServer: result.updatedOnServer,
      perImport: result.imports,
      problems: result.problems,
    }),
  );
}
process.exit(ok ? 0 : 1);
