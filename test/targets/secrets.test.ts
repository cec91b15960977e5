/**
 * A target's secret is read from its source and used, and never stored or shown: not in Redis
 * (every key scanned, job data included), not in a worker's log, a report or an API answer.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExport, requireExport } from '../../src/app/exports.js';
import { writeReport } from '../../src/app/imports.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';

const SECRET = `key-${randomUUID()}`;
const PASSWORD = `pw-${randomUUID()}`;
const TOKEN = 'secrets-test-token-0123456789';
const KEY_VARIABLE = 'PORTER_TEST_SECURE_KEY';

let pipeline: Pipeline;
let secure: RunningSandbox;
let dir: string;
let worker: WorkerProcess;
let api: FastifyInstance;
const apiLog = new PassThrough();
let apiLogText = '';

beforeAll(async () => {
  secure = await startSandbox({ port: 0, apiKey: SECRET });
  dir = await mkdtemp(join(tmpdir(), 'porter-secrets-'));
  const targetsFile = join(dir, 'targets.json');
  await writeFile(join(dir, 'password'), `${PASSWORD}\n`);
  await writeFile(
    targetsFile,
    JSON.stringify({
      secure: { url: secure.url, apiKey: { env: KEY_VARIABLE } },
      // a second target whose password comes from a file (the sandbox there needs none)
      filed: { url: secure.url, user: 'porter', password: { file: 'password' }, readOnly: true },
    }),
  );
  process.env[KEY_VARIABLE] = SECRET;
  pipeline = await startPipeline({ workers: false, env: { PORTER_TARGETS_FILE: targetsFile } });
  // a worker that logs everything it does
  worker = spawnWorker(
    {
      ...pipeline.childEnv(),
      PORTER_TARGETS_FILE: targetsFile,
      [KEY_VARIABLE]: SECRET,
      LOG_LEVEL: 'trace',
    },
    ['--concurrency', '2'],
  );
  apiLog.on('data', (chunk: Buffer) => (apiLogText += chunk.toString()));
  api = await buildApiApp({
    context: pipeline.context,
    token: TOKEN,
    logger: true,
    logStream: apiLog,
  });
});

afterAll(async () => {
  delete process.env[KEY_VARIABLE];
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await api?.close();
  await pipeline?.close();
  await secure?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Every value under the prefix, whatever its type, as text. */
async function everyValue(url: string, prefix: string): Promise<string> {
  const redis = new Redis(url);
  let text = '';
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        text += `\n${key} `;
        if (type === 'string') text += (await redis.getBuffer(key))?.toString('latin1') ?? '';
        else if (type === 'hash') text += JSON.stringify(await redis.hgetall(key));
        else if (type === 'list') text += JSON.stringify(await redis.lrange(key, 0, -1));
        else if (type === 'set') text += JSON.stringify(await redis.smembers(key));
        else if (type === 'zset') text += JSON.stringify(await redis.zrange(key, '0', '-1'));
        else if (type === 'stream') text += JSON.stringify(await redis.xrange(key, '-', '+'));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return text;
}

describe('secrets of targets', () => {
  it('are used to sign in, and appear nowhere porter keeps or shows', async () => {
    const upload = await api.inject({
      method: 'POST',
      url: '/v1/imports?resource=users&mode=create&target=secure',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
      payload: csv(
        ['username', 'email'],
        [
          ['sec1', 'sec1@example.com'],
          ['sec2', 'sec2@example.com'],
        ],
      ),
    });
    expect(upload.statusCode).toBe(202);
    const id = upload.json<{ id: string }>().id;
    const final = await pipeline.waitFinal(id);
    expect(final.counts.succeeded).toBe(2);
    expect(
      secure.store
        .users()
        .map((user) => user.username)
        .sort(),
    ).toEqual(['sec1', 'sec2']);

    const exported = await startExport(pipeline.context, {
      resource: 'users',
      format: 'csv',
      outDir: dir,
      target: 'secure',
    });
    const done = await waitFor(async () => {
      const info = await requireExport(pipeline.context, exported.id);
      return info.state === 'completed' || info.state === 'failed' ? info : undefined;
    });
    expect(done.state).toBe('completed');

    const report = new PassThrough();
    let reportText = '';
    report.on('data', (chunk: Buffer) => (reportText += chunk.toString()));
    await writeReport(pipeline.context, id, report, { format: 'json' });
    report.end();

    const answers = await Promise.all(
      ['/v1/targets', `/v1/imports/${id}`, `/v1/exports/${exported.id}`, '/readyz'].map((url) =>
        api.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TOKEN}` } }),
      ),
    );
    const targets = answers[0]!.json<{ name: string; secrets: string[] }[]>();
    expect(targets.find((target) => target.name === 'secure')?.secrets).toEqual([
      `env:${KEY_VARIABLE}`,
    ]);
    expect(targets.find((target) => target.name === 'filed')?.secrets).toEqual(['file:password']);

    const redisText = await everyValue(
      pipeline.context.env.REDIS_URL,
      pipeline.context.env.PORTER_PREFIX,
    );
    expect(redisText).toContain(id);
    const places = {
      redis: redisText,
      workerLog: worker.output(),
      apiLog: apiLogText,
      report: reportText,
      answers: answers.map((answer) => answer.body).join('\n'),
    };
    // each place holds what it should: the checks below look at real text
    expect(places.workerLog).toContain(id);
    expect(places.apiLog).toContain('/v1/imports');
    expect(places.report).toContain('sec1');
    for (const [where, text] of Object.entries(places)) {
      expect(text.includes(SECRET), `the API key in ${where}`).toBe(false);
      expect(text.includes(PASSWORD), `the password in ${where}`).toBe(false);
    }
  });
});
