import { Redis } from 'ioredis';
/**
 * Export speed and memory: a sandbox seeded with N users (default 1,000,000) is exported to
 * CSV by a real worker process (`porter worker`), queued by a real `porter export --wait`.
 * Prints records per second and the worker's peak resident memory (VmHWM), beside its
 * resident memory before the export, so the cost of the export itself shows. Beside them, the
 * ceiling: one GET of every user from the same sandbox by a bare process that only counts
 * the bytes, which is as fast as an export reading that sandbox can be. The worker's CPU time
 * for the export is printed too: on a machine shared with other work, records per CPU second
 * say more about porter than the wall clock does.
 *
 *   npx tsx bench/export-throughput.ts [--users 1000000] [--groups 60] [--format csv]
 *                                      [--cpu-prof DIR]
 *
 * `--cpu-prof DIR` runs the worker under `node --cpu-prof` and leaves its profile in DIR.
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own key prefix.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { deleteKeysWithPrefix } from '../src/util/redis.js';
import type { ExportManifest } from '../src/export/manifest.js';
import { startSandbox } from '../src/sandbox/server.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000000' },
    groups: { type: 'string', default: '60' },
    format: { type: 'string', default: 'csv' },
    'cpu-prof': { type: 'string' },
  },
});
const users = Number(values.users);
const groups = Number(values.groups);
const format = values.format;
const profileDir = values['cpu-prof'];
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `porter-bench-export-${process.pid}`;

/** Resident memory of a running process in MiB: now (VmRSS) and its high-water mark (VmHWM). */
async function memoryMiB(pid: number): Promise<{ rss: number; peak: number }> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number =>
      Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
    return { rss: field('VmRSS'), peak: field('VmHWM') };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

/** CPU seconds a process has used, user and system, from /proc/<pid>/stat. */
async function cpuTimes(pid: number): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100;
  return { user: Number(fields[11]) / ticksPerSecond, system: Number(fields[12]) / ticksPerSecond };
}

/** Lines of a file, counted while streaming it. */
async function countLines(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path)) {
    for (const byte of chunk as Buffer) if (byte === 10) lines++;
  }
  return lines;
}

/** A GET of every user by a separate bare process, which only counts the answer's bytes. */
const RAW_GET = `
const started = performance.now();
require('node:http').get(process.argv[1], (answer) => {
  let bytes = 0;
  answer.on('data', (chunk) => (bytes += chunk.length));
  answer.on('end', () => console.log(JSON.stringify({ status: answer.statusCode, bytes, ms: performance.now() - started })));
});`;

/** Seconds and bytes of one raw GET of all users. */
async function rawGet(url: string): Promise<{ seconds: number; bytes: number }> {
  const child = spawn('node', ['-e', RAW_GET, `${url}/wf/restapi/v2/admin/userManager`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await once(child, 'exit');
  const { status, bytes, ms } = JSON.parse(output) as { status: number; bytes: number; ms: number };
  if (status !== 200) throw new Error(`raw GET answered ${status}`);
  return { seconds: ms / 1000, bytes };
}

async function cleanup(): Promise<void> {
  await deleteKeysWithPrefix(redisUrl, prefix);
}

const outDir = await mkdtemp(join(tmpdir(), 'porter-bench-export-'));
const seedStarted = performance.now();
const sandbox = await startSandbox({ port: 0, seed: { users, groups, acls: groups * 3 } });
console.log(
  `sandbox seeded with ${users} users, ${groups} groups in ${((performance.now() - seedStarted) / 1000).toFixed(1)}s`,
);
const ceiling = await rawGet(sandbox.url);
console.log(
  `raw GET (ceiling):   ${(users / ceiling.seconds).toFixed(0)} records/s ` +
    `(${ceiling.seconds.toFixed(1)}s, ${(ceiling.bytes / 2 ** 20).toFixed(0)} MiB)`,
);
const env = {
  ...process.env,
  REDIS_URL: redisUrl,
  PORTER_PREFIX: prefix,
  ADMIN_BASE_URL: sandbox.url,
  PORTER_EXPORT_DIR: outDir,
  LOG_LEVEL: 'warn',
};
const profileArgs = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
const worker = spawn('node', [...profileArgs, 'bin/porter.js', 'worker'], {
  env,
  stdio: 'inherit',
});
try {
  // wait until the worker listens on the export queue
  const redis = new Redis(redisUrl);
  for (let tries = 0; ; tries++) {
    const clients = (await redis.client('LIST')) as string;
    if (clients.includes(`${prefix}:exports`) || tries > 100) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  redis.disconnect();
  const before = await memoryMiB(worker.pid!);
  const cpuBefore = await cpuTimes(worker.pid!);
  let peak = before.peak;
  const sampler = setInterval(() => {
    void memoryMiB(worker.pid!).then((memory) => (peak = Math.max(peak, memory.peak)));
  }, 200);
  const started = performance.now();
  const sandboxCpuBefore = process.cpuUsage();
  const producer = spawn(
    'node',
    ['bin/porter.js', 'export', '--resource', 'users', '--format', format, '--wait'],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const [code] = (await once(producer, 'exit')) as [number];
  const wallSeconds = (performance.now() - started) / 1000;
  const sandboxCpu = process.cpuUsage(sandboxCpuBefore);
  clearInterval(sampler);
  peak = Math.max(peak, (await memoryMiB(worker.pid!)).peak);
  const cpuAfter = await cpuTimes(worker.pid!);
  const workerUser = cpuAfter.user - cpuBefore.user;
  const workerSystem = cpuAfter.system - cpuBefore.system;
  const workerCpu = workerUser + workerSystem;
  if (code !== 0) throw new Error(`porter export exited ${code}`);

  const [runId] = await readdir(outDir);
  const runDir = join(outDir, runId!);
  const manifest = JSON.parse(
    await readFile(join(runDir, 'manifest.json'), 'utf8'),
  ) as ExportManifest;
  const file = manifest.files[0]!;
  const lines = await countLines(join(runDir, file.name));
  const expectedLines = format === 'csv' ? users + 1 : format === 'json' ? users + 2 : users;
  if (manifest.counts.users !== users || lines !== expectedLines) {
    throw new Error(
      `expected ${users} users, manifest says ${manifest.counts.users}, ${lines} lines`,
    );
  }
  const exportSeconds = (Date.parse(manifest.finishedAt) - Date.parse(manifest.startedAt)) / 1000;
  console.log(`exported ${users} users to ${file.name}: ${(file.bytes / 2 ** 20).toFixed(0)} MiB`);
  console.log(
    `export run:          ${(users / exportSeconds).toFixed(0)} records/s (${exportSeconds.toFixed(1)}s)`,
  );
  console.log(
    `end to end (queue):  ${(users / wallSeconds).toFixed(0)} records/s (${wallSeconds.toFixed(1)}s)`,
  );
  console.log(
    `raw GET (ceiling):   ${(users / ceiling.seconds).toFixed(0)} records/s (${ceiling.seconds.toFixed(1)}s)`,
  );
  console.log(
    `worker CPU:          ${workerCpu.toFixed(1)}s (user ${workerUser.toFixed(1)}s, system ${workerSystem.toFixed(1)}s), ` +
      `${(users / workerCpu).toFixed(0)} records per CPU second`,
  );
  console.log(
    `sandbox CPU:         ${((sandboxCpu.user + sandboxCpu.system) / 1e6).toFixed(1)}s (this process, which serves the GET)`,
  );
  console.log(
    `worker memory: ${before.rss.toFixed(0)} MiB resident before, peak ${peak.toFixed(0)} MiB (VmHWM)`,
  );
} finally {
  worker.kill('SIGTERM');
  await once(worker, 'exit').catch(() => {});
  await sandbox.close();
  await rm(outDir, { recursive: true, force: true });
  await cleanup();
}
