/**
 * SCIM writes, many at once: N concurrent POST /Users, then N concurrent PATCH /Users/{id} of
 * the users just created, to `porter api` over real HTTP, against the sandbox answering after
 * --latency ms. For each burst it prints the calls that reached the DAM per request, the answer
 * times (p50, p95, max) beside the bound of 2 × latency + window, and the CPU per request of
 * the API (with the sandbox) and of the provider. Before them it prints the floor: the answer
 * times of as many concurrent requests that ask porter for nothing but a token check
 * (GET /ServiceProviderConfig), and each burst's p95 beyond it. Last, creates sent one after
 * another (no one to gather with).
 *
 * The requests come from a child process over keep-alive connections opened before, as an
 * identity provider's would; the API and the sandbox share this process. Asserts nothing.
 *
 * Run: npx tsx bench/scim-writes.ts [requests=200] [latencyMs=50]
 * Needs Redis (REDIS_URL, default redis://127.0.0.1:6379).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createPorterContext } from '../src/app/context.js';
import { loadEnv } from '../src/config/env.js';
import { buildApiApp } from '../src/http/build-app.js';
import { startSandbox } from '../src/sandbox/server.js';
import { silentLogger } from '../src/util/logger.js';

const requests = Number(process.argv[2] ?? 200);
const latencyMs = Number(process.argv[3] ?? 50);
const TOKEN = 'bench-scim-token-0123456789abcdef';

/**
 * The identity provider: opens its connections, times as many discovery GETs at once (the
 * floor), then sends `count` creates named `<prefix>.<i>` (all at once, or one after another)
 * and, in a burst, a PATCH of each user created, all at once. It prints a line before each
 * burst (the API counts from there) and, last, the answer times in ms as JSON.
 */
const PROVIDER = `
const http = require('node:http');
const [base, token, prefix, count, serial] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(count) });
const send = (method, path, body) =>
  new Promise((resolve, reject) => {
    const headers = { authorization: 'Bearer ' + token };
    if (body !== undefined) {
      headers['content-type'] = 'application/scim+json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const request = http.request(base + path, { method, agent, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode, text }));
    });
    request.on('error', reject);
    request.end(body);
  });
const timed = async (method, path, body, expected) => {
  const started = performance.now();
  const answer = await send(method, path, body);
  if (answer.status !== expected) throw new Error(method + ' ' + path + ': ' + answer.status + ' ' + answer.text);
  return { ms: performance.now() - started, answer };
};
const create = (userName) =>
  timed('POST', '/Users', JSON.stringify({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    name: { givenName: 'Ada', familyName: userName },
    emails: [{ value: userName + '@example.com', type: 'work', primary: true }],
    active: true,
  }), 201);
const patch = (id) =>
  timed('PATCH', '/Users/' + id, JSON.stringify({
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'title', value: 'Engineer' }],
  }), 204);
const burst = async (marker, work) => {
  console.log(marker);
  const cpu = process.cpuUsage();
  const from = process.hrtime.bigint() / 1000n;
  const done = await work();
  const used = process.cpuUsage(cpu);
  const span = [String(from), String(process.hrtime.bigint() / 1000n)];
  return { times: done.map((one) => one.ms), done, cpuMs: (used.user + used.system) / 1000, span };
};
const names = Array.from({ length: Number(count) }, (_, i) => prefix + '.' + i);
(async () => {
  const open = serial === 'serial' ? 1 : Number(count);
  const get = async () => (await timed('GET', '/ServiceProviderConfig', undefined, 200)).ms;
  await Promise.all(Array.from({ length: open }, get));
  const floor = await Promise.all(Array.from({ length: open }, get));
  if (serial === 'serial') {
    const creates = await burst('creates', async () => {
      const done = [];
      for (const name of names) done.push(await create(name));
      return done;
    });
    console.log(JSON.stringify({ floor, creates: { ...creates, done: undefined } }));
    return;
  }
  const creates = await burst('creates', () => Promise.all(names.map(create)));
  const ids = creates.done.map((one) => JSON.parse(one.answer.text).id);
  const patches = await burst('patches', () => Promise.all(ids.map(patch)));
  console.log(JSON.stringify({ floor, creates: { ...creates, done: undefined }, patches: { ...patches, done: undefined } }));
})();
`;

interface Burst {
  /** Each request's answer time, ms. */
  times: number[];
  /** The provider's own CPU during the burst, ms. */
  cpuMs: number;
  /** The burst's span on the monotonic clock, µs. */
  span: [string, string];
  /** The API's (and the sandbox's) CPU during the burst, ms. */
  apiCpuMs: number;
  /** The calls that reached the DAM during the burst. */
  damCalls: number;
}

interface ProviderRun {
  floor: number[];
  creates: Burst;
  patches?: Burst;
}

async function provider(
  base: string,
  prefix: string,
  count: number,
  damCalls: () => number,
  serial = false,
): Promise<ProviderRun> {
  const child = spawn(
    process.execPath,
    ['-e', PROVIDER, base, TOKEN, prefix, String(count), serial ? 'serial' : 'burst'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // the API's CPU and the DAM's calls, counted from each burst's line to the next
  const marks: Array<{ name: string; cpu: NodeJS.CpuUsage; calls: number }> = [];
  let last = '';
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'creates' || line === 'patches') {
      marks.push({ name: line, cpu: process.cpuUsage(), calls: damCalls() });
    } else last = line;
  }
  const end = { cpu: process.cpuUsage(), calls: damCalls() };
  const run = JSON.parse(last) as ProviderRun;
  for (const [index, mark] of marks.entries()) {
    const next = marks[index + 1] ?? end;
    const used = process.cpuUsage(mark.cpu);
    const burst = run[mark.name as 'creates' | 'patches']!;
    burst.damCalls = next.calls - mark.calls;
    // a later burst's CPU is not this one's
    const nextUsed = index + 1 < marks.length ? process.cpuUsage(next.cpu) : { user: 0, system: 0 };
    burst.apiCpuMs = (used.user + used.system - nextUsed.user - nextUsed.system) / 1000;
    burst.times.sort((a, b) => a - b);
  }
  run.floor.sort((a, b) => a - b);
  return run;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const ms = (value: number): string => `${value.toFixed(0)} ms`;

function report(what: string, burst: Burst, floorP95: number, bound: number): void {
  const p95 = percentile(burst.times, 95);
  console.log(
    `${requests} concurrent ${what}: ${burst.damCalls} DAM calls, ` +
      `${(burst.damCalls / requests).toFixed(3)} calls per request`,
  );
  console.log(
    `  answered in p50 ${ms(percentile(burst.times, 50))}, p95 ${ms(p95)}, ` +
      `max ${ms(burst.times.at(-1)!)}; p95 beyond the floor ${ms(p95 - floorP95)}; ` +
      `bound 2 × latency + window = ${bound} ms`,
  );
  console.log(
    `  CPU per request: the API and the sandbox ${(burst.apiCpuMs / requests).toFixed(2)} ms, ` +
      `the provider ${(burst.cpuMs / requests).toFixed(2)} ms; ` +
      `span for bench/profile-summary.ts: --from ${burst.span[0]} --to ${burst.span[1]}`,
  );
}

async function main(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, faults: { latencyMs } });
  const context = await createPorterContext(
    loadEnv({
      ...process.env,
      PORTER_PREFIX: `bench-scim-${process.pid}`,
      ADMIN_BASE_URL: sandbox.url,
    }),
    { logger: silentLogger },
  );
  const app = await buildApiApp({ context, token: TOKEN });
  const base = `${await app.listen({ port: 0, host: '127.0.0.1' })}/scim/v2/default`;
  const windowMs = context.env.PORTER_SCIM_WINDOW_MS;
  const stats = sandbox.store.stats;
  const damCalls = (): number => Object.values(stats.requests).reduce((a, b) => a + b, 0);
  try {
    // warm up: connections, the mapping, the first read, and the code paths of a burst
    await provider(base, 'warm', requests, damCalls);
    const run = await provider(base, 'burst', requests, damCalls);
    const floorP95 = percentile(run.floor, 95);
    const bound = 2 * latencyMs + windowMs;
    console.log(
      `the sandbox answering after ${latencyMs} ms, window ${windowMs} ms; the floor, ` +
        `${requests} concurrent GET /ServiceProviderConfig: p50 ${ms(percentile(run.floor, 50))}, ` +
        `p95 ${ms(floorP95)}`,
    );
    report('creates', run.creates, floorP95, bound);
    report('PATCHes of those users', run.patches!, floorP95, bound);
    const serial = (await provider(base, 'serial', 20, damCalls, true)).creates.times;
    console.log(
      `20 creates one after another: p50 ${ms(percentile(serial, 50))}, p95 ${ms(percentile(serial, 95))}`,
    );
  } finally {
    await app.close();
    // the bench's keys go (the shadows and journals of the users it created, the audit)
    for await (const keys of context.redis.scanStream({ match: `${context.env.PORTER_PREFIX}:*` }))
      if ((keys as string[]).length > 0) await context.redis.unlink(...(keys as string[]));
    await context.close();
    await sandbox.close();
  }
}

await main();
