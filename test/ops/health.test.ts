/**
 * /healthz answers while the process lives; /readyz answers 200 only while Redis and the admin
 * server answer, and 503 naming the failing check otherwise. On the API and on a worker's
 * metrics port (a real `porter worker --metrics-port` process).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPorterContext } from '../../src/app/context.js';
import { loadEnv } from '../../src/config/env.js';
import { ReadinessProbe } from '../../src/app/readiness.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { buildOpsApp } from '../../src/http/build-ops-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { silentLogger } from '../../src/util/logger.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker } from '../helpers/worker-process.js';

const TOKEN = 'health-token-0123456789';

interface ReadyBody {
  status: string;
  checks: Record<'redis' | 'admin', { ok: boolean; ms: number; reason?: string }>;
}

async function readyz(baseUrl: string): Promise<{ status: number; body: ReadyBody }> {
  const response = await fetch(`${baseUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as ReadyBody };
}

describe('health checks on the API', () => {
  let pipeline: Pipeline;
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    pipeline = await startPipeline({ workers: false });
    app = await buildApiApp({ context: pipeline.context, token: TOKEN });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
  });

  it('/healthz and /readyz need no token', async () => {
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await readyz(baseUrl);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'ready',
      checks: { redis: { ok: true }, admin: { ok: true } },
    });
  });

  it('/readyz answers 503 while the admin server is down, and 200 once it is back', async () => {
    const { port } = new URL(pipeline.sandbox.url);
    await pipeline.sandbox.close();
    const down = await waitFor(async () => {
      const answer = await readyz(baseUrl);
      return answer.status === 503 ? answer : undefined;
    });
    expect(down.body).toMatchObject({
      status: 'not_ready',
      checks: { redis: { ok: true }, admin: { ok: false, reason: 'cannot connect' } },
    });
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    // the same port again: the configured admin server is back
    const again: RunningSandbox = await startSandbox({ port: Number(port) });
    try {
      const up = await waitFor(async () => {
        const answer = await readyz(baseUrl);
        return answer.status === 200 ? answer : undefined;
      });
      expect(up.body.checks.admin.ok).toBe(true);
    } finally {
      await again.close();
    }
  });

  it('/readyz answers 503 naming Redis when Redis does not answer', async () => {
    const sandbox = await startSandbox({ port: 0 });
    const context = await createPorterContext(
      loadEnv({
        // a port nothing listens on
        REDIS_URL: 'redis://127.0.0.1:9',
        ADMIN_BASE_URL: sandbox.url,
        PORTER_READY_TIMEOUT_MS: '300',
      }),
      { logger: silentLogger, checkRedis: false },
    );
    const lonely = await buildApiApp({ context, token: TOKEN });
    try {
      const answer = await lonely.inject({ method: 'GET', url: '/readyz' });
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toMatchObject({
        status: 'not_ready',
        checks: { redis: { ok: false, reason: 'no answer within 300 ms' }, admin: { ok: true } },
      });
    } finally {
      await lonely.close();
      context.redis.disconnect();
      context.bullConnection.disconnect();
      await sandbox.close();
    }
  });
});

describe('a worker with --metrics-port', () => {
  let pipeline: Pipeline;
  beforeAll(async () => {
    pipeline = await startPipeline({ workers: false });
  });
  afterAll(async () => {
    await pipeline?.close();
  });

  it('/readyz says stopping once the worker drains its work', async () => {
    const probe = new ReadinessProbe(pipeline.context);
    const app = await buildOpsApp({ context: pipeline.context, probe });
    try {
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      probe.markStopping();
      const stopping = await app.inject({ method: 'GET', url: '/readyz' });
      expect(stopping.statusCode).toBe(503);
      expect(stopping.json()).toMatchObject({ status: 'stopping' });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('serves /healthz, /readyz and /metrics without a token', async () => {
    const worker = spawnWorker(pipeline.childEnv(), ['--metrics-port', '0']);
    try {
      const metricsUrl = await waitFor(
        () => /metrics\s+(http:\/\/\S+)\/metrics/.exec(worker.output())?.[1],
        { what: 'the worker to print its metrics address' },
      );
      expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
      expect((await readyz(metricsUrl)).status).toBe(200);
      const metrics = await fetch(`${metricsUrl}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(/^porter_queue_jobs\{queue="import-batches",state="waiting"\} 0$/m);
      expect(text).toMatch(/^# TYPE porter_records_total counter$/m);
    } finally {
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    }
  });
});
