/**
 * One import traced across processes: a real `porter import` (the producer) and a real
 * `porter worker` send their spans to a real OTLP/HTTP receiver, and one trace links the upload,
 * the jobs and the admin calls. Without the OTEL_* variables nothing is sent.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createImportQueue, prepareJobId } from '../../src/queue/import-queue.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import { runPorter } from '../helpers/porter-cli.js';
import { deletePrefix, freshPrefix, testRedisUrl, waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';

const USER = 'porter';
const PASSWORD = 'tracing-test-secret-7f3a';

/** Every OTEL_* variable porter reads, unset (an empty value counts as unset). */
const OTEL_UNSET = {
  OTEL_SDK_DISABLED: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_PROTOCOL: '',
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '',
  OTEL_SERVICE_NAME: '',
  OTEL_BSP_SCHEDULE_DELAY: '',
};

let sandbox: RunningSandbox;
let dir: string;
let file: string;
const prefixes: string[] = [];
const workers: WorkerProcess[] = [];
const receivers: OtlpReceiver[] = [];

beforeAll(async () => {
  // credentials as request parameters: the reads' URLs carry the password, the spans must not
  sandbox = await startSandbox({ port: 0, user: USER, password: PASSWORD });
  dir = await mkdtemp(join(tmpdir(), 'porter-tracing-'));
  file = join(dir, 'users.csv');
  await writeFile(
    file,
    'username,email\ntrace.one,one@example.com\ntrace.two,two@example.com\ntrace.three,three@example.com\n',
  );
});

afterEach(async () => {
  for (const worker of workers.splice(0)) {
    if (worker.child.exitCode === null) worker.child.kill('SIGTERM');
    await worker.exited;
  }
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
  for (const prefix of prefixes) await deletePrefix(testRedisUrl(), prefix);
});

function baseEnv(): Record<string, string> {
  const prefix = freshPrefix('tracing');
  prefixes.push(prefix);
  return {
    ...OTEL_UNSET,
    REDIS_URL: testRedisUrl(),
    PORTER_PREFIX: prefix,
    ADMIN_BASE_URL: sandbox.url,
    ADMIN_AUTH_MODE: 'params',
    ADMIN_USER: USER,
    ADMIN_PASSWORD: PASSWORD,
    // the log says when spans could not be sent
    LOG_LEVEL: 'warn',
  };
}

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  receivers.push(started);
  return started;
}

function worker(env: Record<string, string>): WorkerProcess {
  const started = spawnWorker(env);
  workers.push(started);
  return started;
}

/** The trace context and baggage the import's preparation job carries to its worker. */
async function prepareJobTelemetry(
  env: Record<string, string>,
  importId: string,
): Promise<Record<string, string> | undefined> {
  const connection = new Redis(env.REDIS_URL!, { maxRetriesPerRequest: null });
  const queue = createImportQueue({ connection, prefix: env.PORTER_PREFIX! });
  try {
    const job = await queue.getJob(prepareJobId(importId));
    expect(job).toBeDefined();
    const metadata = job!.opts.telemetry?.metadata;
    return metadata === undefined ? undefined : (JSON.parse(metadata) as Record<string, string>);
  } finally {
    await queue.close();
    await connection.quit();
  }
}

/** Submits the CSV without waiting; gives the import id. */
async function submit(env: Record<string, string>, extra: string[] = []): Promise<string> {
  const result = await runPorter(
    ['import', file, '--resource', 'users', '--mode', 'upsert', '--batch-size', '2', ...extra],
    env,
  );
  expect(result.stderr).not.toMatch(/tracing:/);
  expect(result.code).toBe(0);
  const importId = result.stdout.trim().split('\n')[0]!;
  expect(importId).toMatch(/^imp_\w+$/);
  return importId;
}

/** The span and its ancestors, up to the root of its trace. */
function ancestry(span: ReceivedSpan, all: ReceivedSpan[]): ReceivedSpan[] {
  const chain = [span];
  for (let at = span; at.parentSpanId !== undefined;) {
    const parent = all.find((other) => other.spanId === at.parentSpanId);
    if (!parent) break;
    chain.push(parent);
    at = parent;
  }
  return chain;
}

describe('tracing an import', () => {
  it('links the producer upload, the batch jobs and the worker admin calls in one trace, each span carrying the import id', async () => {
    const otlp = await receiver();
    const env = {
      ...baseEnv(),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    // no worker yet: the preparation job waits in Redis, carrying the trace to whoever takes it
    const importId = await submit({ ...env, OTEL_SERVICE_NAME: 'porter-cli' }, [
      '--lookup',
      'each',
    ]);
    const carried = await prepareJobTelemetry(env, importId);
    expect(carried?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(decodeURIComponent(carried?.baggage ?? '')).toContain(`porter.import.id=${importId}`);

    worker({ ...env, OTEL_SERVICE_NAME: 'porter-worker' });
    // a job's run ends after everything in it: three runs seen, every span of them was sent
    const runs = await waitFor(
      () => {
        const found = otlp.spans.filter(
          (span) =>
            span.name === 'process import-batches' &&
            span.attributes['porter.import.id'] === importId,
        );
        return found.length >= 3 ? found : undefined;
      },
      { timeoutMs: 45_000, what: 'the worker spans of the preparation and of two batches' },
    );
    expect(runs).toHaveLength(3);

    const upload = otlp.spans.find((span) => span.name === 'porter.import.upload');
    expect(upload).toMatchObject({
      service: 'porter-cli',
      attributes: {
        'porter.import.id': importId,
        'porter.target': 'default',
        'porter.resource': 'users',
        'porter.records': 3,
      },
    });
    const trace = otlp.spans.filter((span) => span.traceId === upload!.traceId);
    // one trace, across both processes; nothing else was sent (an idle worker's polls start none)
    expect(trace).toHaveLength(otlp.spans.length);
    expect(new Set(trace.map((span) => span.service))).toEqual(
      new Set(['porter-cli', 'porter-worker']),
    );
    for (const span of trace) {
      expect(span.attributes, span.name).toMatchObject({
        'porter.import.id': importId,
        'porter.target': 'default',
      });
    }

    const named = (name: string): ReceivedSpan[] => trace.filter((span) => span.name === name);
    expect(named('add import-batches.prepare')).toMatchObject([{ service: 'porter-cli' }]);
    expect(named('porter.import.prepare')).toMatchObject([
      { service: 'porter-worker', attributes: { 'porter.batches': 2 } },
    ]);
    expect(named('addBulk import-batches')).toHaveLength(1);
    const batches = named('porter.import.batch');
    expect(
      batches.map((span) => [
        span.attributes['porter.batch.index'],
        span.attributes['porter.records'],
      ]),
    ).toEqual(
      expect.arrayContaining([
        [0, 2],
        [1, 1],
      ]),
    );
    for (const batch of batches) {
      expect(batch.attributes).toMatchObject({
        'porter.resource': 'users',
        'porter.batch.attempt': 1,
        'porter.batch.write_calls': 1,
        'porter.batch.failed': 0,
      });
    }
    expect(
      batches.reduce((sum, span) => sum + Number(span.attributes['porter.batch.succeeded']), 0),
    ).toBe(3);

    // the admin calls: the writes of the two batches, and the reads of each record
    const writes = named('PUT users');
    expect(writes).toHaveLength(2);
    const userManager = `${sandbox.url}/wf/restapi/v2/admin/userManager`;
    for (const write of writes) {
      expect(write).toMatchObject({
        service: 'porter-worker',
        kind: 3, // client
        attributes: {
          'http.request.method': 'PUT',
          'url.full': userManager,
          'http.response.status_code': 200,
          'porter.call.outcome': 'ok',
        },
      });
    }
    expect(writes.map((span) => span.attributes['porter.records']).sort()).toEqual([1, 2]);
    const reads = named('GET users');
    expect(reads.length).toBeGreaterThanOrEqual(3);
    for (const read of reads) {
      expect(read.attributes).toMatchObject({
        'url.full': userManager,
        'http.response.status_code': 200,
      });
    }
    // no credential anywhere: the URLs lose their query, where `params` puts the password
    expect(JSON.stringify(otlp.spans)).not.toContain(PASSWORD);

    // each write goes up, through its batch, its job, the batch jobs' queueing, the preparation
    // and its job, to the upload in the other process
    for (const write of writes) {
      const names = ancestry(write, trace).map((span) => span.name);
      expect(names).toEqual([
        'PUT users',
        'porter.import.batch',
        'process import-batches',
        'addBulk import-batches',
        'porter.import.prepare',
        'process import-batches',
        'add import-batches.prepare',
        'porter.import.upload',
      ]);
    }
    expect(upload!.parentSpanId).toBeUndefined();
    expect(sandbox.store.users().map((user) => user.username)).toEqual(
      expect.arrayContaining(['trace.one', 'trace.two', 'trace.three']),
    );
  });

  it('sends protobuf unless told otherwise, and sends at exit what a command traced', async () => {
    const otlp = await receiver();
    // no worker: the command's own spans (the upload, the job queued) leave as it exits
    await submit({ ...baseEnv(), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces` });
    expect(otlp.posts.length).toBeGreaterThan(0);
    for (const post of otlp.posts) {
      expect(post.contentType).toBe('application/x-protobuf');
      expect(post.bytes).toBeGreaterThan(0);
    }
  });

  it('writes one JSON line per span on stderr with OTEL_TRACES_EXPORTER=console', async () => {
    const env = { ...baseEnv(), OTEL_TRACES_EXPORTER: 'console' };
    const result = await runPorter(
      ['import', file, '--resource', 'users', '--mode', 'upsert'],
      env,
    );
    expect(result.code).toBe(0);
    const importId = result.stdout.trim();
    const lines = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{"span":'))
      .map((line) => JSON.parse(line) as { span: string; traceId: string; attributes: object });
    expect(lines.map((line) => line.span).sort()).toEqual([
      'add import-batches.prepare',
      'porter.import.upload',
    ]);
    expect(new Set(lines.map((line) => line.traceId)).size).toBe(1);
    for (const line of lines) {
      expect(line.attributes).toMatchObject({ 'porter.import.id': importId });
    }
  });

  it('a collector that refuses the spans costs a warning, never the import', async () => {
    const refusing = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(400).end('{}'));
    });
    refusing.listen(0, '127.0.0.1');
    await once(refusing, 'listening');
    try {
      const { port } = refusing.address() as AddressInfo;
      const result = await runPorter(['import', file, '--resource', 'users', '--mode', 'upsert'], {
        ...baseEnv(),
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      });
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toMatch(/^imp_\w+$/);
      expect(result.stderr).toMatch(/tracing: spans not sent/);
    } finally {
      refusing.closeAllConnections();
      refusing.close();
    }
  });

  it('sends nothing without the OTEL variables, with OTEL_TRACES_EXPORTER=none, or with OTEL_SDK_DISABLED=true', async () => {
    const otlp = await receiver();
    const env = baseEnv();
    // unset: the job carries no trace to its worker
    const untraced = await submit(env);
    expect(await prepareJobTelemetry(env, untraced)).toBeUndefined();

    // pointed at the receiver, but switched off
    const endpoint = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    };
    const stopped = worker({ ...env, ...endpoint, OTEL_TRACES_EXPORTER: 'none' });
    const waited = await runPorter(
      ['import', file, '--resource', 'users', '--mode', 'upsert', '--wait'],
      { ...env, ...endpoint, OTEL_SDK_DISABLED: 'true' },
    );
    expect(waited.code).toBe(0);
    expect(waited.stderr).toMatch(/completed: 3 records, 3 succeeded/);
    expect((await runPorter(['status', untraced, '--follow'], env)).code).toBe(0);
    const first = await runPorter(['status', untraced, '--json'], env);
    expect(JSON.parse(first.stdout)).toMatchObject({
      state: 'completed',
      counts: { succeeded: 3 },
    });

    // a process sends its last spans as it stops: stop the worker before counting
    stopped.child.kill('SIGTERM');
    expect(await stopped.exited).toBe(0);
    expect(otlp.requests()).toBe(0);
  });
});
