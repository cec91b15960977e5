/**
 * The --max-rps gate under load: several gates (as in several worker processes) share one
 * Redis and ask for request slots at once. Prints how long the requests took, the most granted
 * in any window just under one second (never above the cap), and the cost of one slot uncapped.
 *
 *   npx tsx bench/request-gate.ts [--cap 50] [--requests 400] [--gates 4]
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { RequestGate } from '../src/queue/request-gate.js';

const { values } = parseArgs({
  options: {
    cap: { type: 'string', default: '50' },
    requests: { type: 'string', default: '400' },
    gates: { type: 'string', default: '4' },
  },
});
const cap = Number(values.cap);
const WINDOW_MS = 950;
const requests = Number(values.requests);
const prefix = `porter-bench-gate-${process.pid}`;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

try {
  const gates = Array.from(
    { length: Number(values.gates) },
    () => new RequestGate(redis, prefix, cap),
  );
  const granted: number[] = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: requests }, (_, index) =>
      gates[index % gates.length]!.beforeRequest().then(() => granted.push(Date.now())),
    ),
  );
  granted.sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; first < granted.length; first++) {
    // grant times are taken here, a few ms after Redis granted them: a window a little short
    // of one second keeps that skew from joining two windows' bursts
    while (last < granted.length && granted[last]! - granted[first]! < WINDOW_MS) last++;
    most = Math.max(most, last - first);
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `cap ${cap}/s, ${requests} requests through ${gates.length} gates: ${seconds.toFixed(2)} s ` +
      `(${(requests / seconds).toFixed(1)}/s), most granted in any ${WINDOW_MS} ms ${most}`,
  );

  const open = new RequestGate(redis, `${prefix}-open`, 1_000_000);
  const n = 5_000;
  const t0 = process.hrtime.bigint();
  for (let index = 0; index < n; index++) await open.beforeRequest();
  const micros = Number(process.hrtime.bigint() - t0) / 1000 / n;
  console.log(`one slot, uncapped: ${micros.toFixed(0)} µs (one Redis round trip)`);
} finally {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
