/**
 * SCIM user creates, many at once: N concurrent POST /Users to `porter api` over real HTTP,
 * against the sandbox answering after --latency ms. Prints the calls that reached the DAM per
 * request and the answer times (p50, p95, max) beside the bound of 2 × latency + window, and the
 * same for creates sent one after another (no one to gather with). The requests come from a
 * child process, as an identity provider's would; the API and the sandbox share this one.
 * Asserts nothing.
 *
 * Run: npx tsx bench/scim-creates.ts [requests=200] [latencyMs=50]
 * Needs Redis (REDIS_URL, default redis://127.0.0.1:6379).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createPorterContext } from '../src/app/context.js';
import { loadEnv } from '../src/config/env.js';
import { buildApiApp } from '../src/http/build-app.js';
import { startSandbox } from '../src/sandbox/server.js';
import { silentLogger } from '../src/util/logger.js';

const requests = Number(process.argv[2] ?? 200);
const latencyMs = Number(process.argv[3] ?? 50);
const TOKEN = 'bench-scim-token-0123456789abcdef';

/**
 * The identity provider: sends `count` creates named `<prefix>.<i>`, all at once or one after
 * another, and prints each one's answer time in ms as JSON.
 */
const PROVIDER = `
const [base, token, prefix, count, serial] = process.argv.slice(1);
const create = async (userName) => {
  const started = performance.now();
  const response = await fetch(base + '/Users', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + token, 'content-type': 'application/scim+json' },
    body: JSON.stringify({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      name: { givenName: 'Ada', familyName: userName },
      emails: [{ value: userName + '@example.com', type: 'work', primary: true }],
      active: true,
    }),
  });
  await response.text();
  if (response.status !== 201) throw new Error(userName + ': ' + response.status);
  return performance.now() - started;
};
const names = Array.from({ length: Number(count) }, (_, i) => prefix + '.' + i);
(async () => {
  const times = [];
  if (serial === 'serial') for (const name of names) times.push(await create(name));
  else times.push(...(await Promise.all(names.map(create))));
  console.log(JSON.stringify(times));
})();
`;

async function provider(base: string, prefix: string, count: number, serial = false) {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '-e',
    PROVIDER,
    base,
    TOKEN,
    prefix,
    String(count),
    serial ? 'serial' : 'burst',
  ]);
  return (JSON.parse(stdout) as number[]).sort((a, b) => a - b);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const ms = (value: number): string => `${value.toFixed(0)} ms`;

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
  try {
    // warm up: connections, the mapping, the first read, and the code paths of a burst
    await provider(base, 'warm', requests);
    const stats = sandbox.store.stats;
    const calls = (): number => Object.values(stats.requests).reduce((a, b) => a + b, 0);
    const before = calls();
    const posts = stats.requests.POST;
    const cpu = process.cpuUsage();
    const times = await provider(base, 'burst', requests);
    const used = process.cpuUsage(cpu);
    const dam = calls() - before;
    console.log(
      `${requests} concurrent creates at latency ${latencyMs} ms, window ${windowMs} ms: ` +
        `${dam} DAM calls (${stats.requests.POST - posts} POST), ` +
        `${(dam / requests).toFixed(3)} calls per request`,
    );
    console.log(
      `  answered in p50 ${ms(percentile(times, 50))}, p95 ${ms(percentile(times, 95))}, ` +
        `max ${ms(times.at(-1)!)}; bound 2 × latency + window = ${2 * latencyMs + windowMs} ms; ` +
        `CPU of the API and the sandbox ${((used.user + used.system) / 1000 / requests).toFixed(2)} ms per request`,
    );
    const serial = await provider(base, 'serial', 20, true);
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
