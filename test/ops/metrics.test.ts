/**
 * /metrics over a real import against the sandbox: queue depth while the import waits for a
 * worker, then records by status, admin calls with their latency histogram, batch durations and
 * import states once it ran; and the 429s of a rate-limited sandbox.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { PrometheusMetrics } from '../../src/metrics/prometheus.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

const TOKEN = 'metrics-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  // no workers yet: the first import waits in the queue until the test starts them
  pipeline = await startPipeline({ workers: false, metrics: new PrometheusMetrics() });
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

async function scrape(): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The sum of the series of this name whose labels include these; 0 when there is none. */
function total(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [
        pair[1]!,
        pair[2]!,
      ]),
    );
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) {
      sum += Number(match[3]);
    }
  }
  return sum;
}

describe('/metrics', () => {
  it('needs the API token by default', async () => {
    expect((await fetch(`${baseUrl}/metrics`)).status).toBe(401);
  });

  it('shows the queue depth while an import waits, then its records, calls and batches', async () => {
    const client = new AdminClient({ baseUrl: pipeline.sandbox.url });
    await client.putUsers([{ username: 'metrics.taken' }]);
    await client.close();
    // in create mode the existing user's record fails; the two others are created
    const submitted = await pipeline.submit(
      csv(['username'], [['metrics.taken'], ['metrics.one'], ['metrics.two']]),
      { resource: 'users', mode: 'create' },
    );
    const waiting = await waitFor(async () => {
      const text = await scrape();
      return total(text, 'porter_queue_jobs', { queue: 'import-batches', state: 'waiting' }) > 0
        ? text
        : undefined;
    });
    expect(total(waiting, 'porter_imports', { state: 'queued' })).toBeGreaterThanOrEqual(1);
    expect(total(waiting, 'porter_records_total')).toBe(0);

    pipeline.startWorkers();
    const info = await pipeline.waitFinal(submitted.id);
    expect(info.counts).toMatchObject({ succeeded: 2, failed: 1 });
    // the import is settled when its batch's results are stored; the worker counts them and the
    // batch just after, so the scrape waits for those counts rather than for time
    const text = await waitFor(
      async () => {
        const scraped = await scrape();
        return total(scraped, 'porter_records_total', { resource: 'users' }) === 3 &&
          total(scraped, 'porter_batch_duration_seconds_count', { outcome: 'done' }) >= 1
          ? scraped
          : undefined;
      },
      { what: 'the records and the batch of the import to be counted' },
    );

    const users = { resource: 'users' };
    expect(
      total(text, 'porter_records_total', { ...users, action: 'create', status: 'succeeded' }),
    ).toBe(2);
    expect(total(text, 'porter_records_total', { ...users, status: 'failed' })).toBe(1);
    expect(
      total(text, 'porter_admin_calls_total', { ...users, method: 'POST', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(total(text, 'porter_admin_calls_total', { ...users, method: 'GET' })).toBeGreaterThan(0);
    // the latency histogram: every call falls in the +Inf bucket, and _count says as much
    const calls = total(text, 'porter_admin_calls_total');
    expect(total(text, 'porter_admin_call_duration_seconds_bucket', { le: '+Inf' })).toBe(calls);
    expect(total(text, 'porter_admin_call_duration_seconds_count')).toBe(calls);
    expect(text).toMatch(/porter_admin_call_duration_seconds_bucket\{le="0\.005"/);
    expect(
      total(text, 'porter_batch_duration_seconds_count', { ...users, outcome: 'done' }),
    ).toBeGreaterThanOrEqual(1);
    expect(total(text, 'porter_queue_jobs', { queue: 'import-batches', state: 'waiting' })).toBe(0);
    expect(total(text, 'porter_queue_jobs', { queue: 'exports', state: 'failed' })).toBe(0);
    expect(total(text, 'porter_imports', { state: 'completed_with_errors' })).toBe(1);
    // every state has its series, at 0 when no import is in it
    expect(text).toMatch(/^porter_imports\{state="cancelled"\} 0$/m);
    expect(text).toMatch(/^porter_exports\{state="running"\} 0$/m);
    // the process's own figures come along
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('counts the answers 429 of a rate-limited admin server', async () => {
    const before = total(await scrape(), 'porter_admin_rate_limited_total');
    pipeline.sandbox.setFaults({ rateLimit: 2 });
    try {
      const rows = Array.from({ length: 6 }, (_, index) => [`metrics.limited${index}`]);
      const { info } = await pipeline.run(csv(['username'], rows), {
        resource: 'users',
        mode: 'upsert',
        batchSize: 1,
      });
      // the test's short retry delays may give a record up: what counts here is the 429s
      expect(info.done).toBe(6);
    } finally {
      pipeline.sandbox.setFaults({ rateLimit: 0 });
    }
    const text = await scrape();
    expect(total(text, 'porter_admin_rate_limited_total', { resource: 'users' })).toBeGreaterThan(
      before,
    );
    expect(
      total(text, 'porter_admin_calls_total', { resource: 'users', outcome: 'rate_limited' }),
    ).toBeGreaterThan(0);
  });

  it('counts the splits and reconcile reads of a call the server refuses as too large', async () => {
    const before = await scrape();
    pipeline.sandbox.setFaults({ maxRecords: 2 });
    try {
      const rows = Array.from({ length: 4 }, (_, index) => [`metrics.split${index}`]);
      const { info } = await pipeline.run(csv(['username'], rows), {
        resource: 'users',
        mode: 'create',
        batchSize: 4,
      });
      expect(info.counts.succeeded).toBe(4);
    } finally {
      pipeline.sandbox.setFaults({ maxRecords: 0 });
    }
    const users = { resource: 'users' };
    // splits and reconcile reads are counted when the batch ends, just after the import settles
    const after = await waitFor(
      async () => {
        const scraped = await scrape();
        return total(scraped, 'porter_batch_duration_seconds_count', users) >
          total(before, 'porter_batch_duration_seconds_count', users)
          ? scraped
          : undefined;
      },
      { what: 'the batch to be counted' },
    );
    expect(total(after, 'porter_splits_total', users)).toBeGreaterThan(
      total(before, 'porter_splits_total', users),
    );
    expect(total(after, 'porter_reconcile_reads_total', users)).toBeGreaterThan(
      total(before, 'porter_reconcile_reads_total', users),
    );
    expect(
      total(after, 'porter_admin_calls_total', { ...users, method: 'POST', outcome: 'refused' }),
    ).toBeGreaterThan(0);
  });
});
