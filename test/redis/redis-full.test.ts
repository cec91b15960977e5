/**
 * A full Redis, as operations meet it: a redis-server of the test's own with a 20 MB maxmemory
 * under noeviction (the shared test Redis is never reconfigured). An upload it refuses ends
 * `failed` with its staged rows removed, even when recording that is refused at first; an import
 * it refuses writes mid-way waits for room instead of giving rows up; and a Redis that evicts
 * keys when full is refused at start-up unless PORTER_ALLOW_EVICTION=true.
 */
import { Writable } from 'node:stream';
import { Readable } from 'node:stream';
import pino from 'pino';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImport } from '../../src/app/imports.js';
import { checkRedis } from '../../src/redis/check-redis.js';
import { loadEnv } from '../../src/config/env.js';
import { startRedisNode, type RedisNode } from '../helpers/redis-node.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/wait.js';

const FULL = ['--maxmemory', '20mb', '--maxmemory-policy', 'noeviction'];

function capture(): { lines: Array<Record<string, unknown>>; logger: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, sink) };
}

/** Fills Redis up: a maxmemory below what it holds now (its own server, never the shared one). */
async function fill(redis: Redis): Promise<void> {
  await redis.config('SET', 'maxmemory', '1');
}

/** Gives Redis room again. */
async function makeRoom(redis: Redis): Promise<void> {
  await redis.config('SET', 'maxmemory', '20mb');
}

/** How many commands Redis refused for want of memory so far. */
async function oomRefusals(redis: Redis): Promise<number> {
  const line = (await redis.info('errorstats'))
    .split(/\r?\n/)
    .find((entry) => entry.startsWith('errorstat_OOM:'));
  return Number(/count=(\d+)/.exec(line ?? '')?.[1] ?? 0);
}

describe('a full Redis', () => {
  let node: RedisNode;
  let redis: Redis;
  beforeAll(async () => {
    node = await startRedisNode({ args: FULL });
    redis = new Redis(node.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await node?.remove();
  });

  it('refuses an upload cleanly: staged rows removed, the import failed once Redis has room', async () => {
    const pipeline = await startPipeline({ redisUrl: node.url, workers: false });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const row = (index: number): string => `full.upload${index},Name${index}\n`;
      async function* upload(): AsyncGenerator<string> {
        yield 'username,firstName\n';
        for (let index = 0; index < 3000; index++) yield row(index);
        await held;
        for (let index = 3000; index < 6000; index++) yield row(index);
      }
      const submitted = startImport(pipeline.context, {
        options: {
          resource: 'users',
          mode: 'create',
          batchSize: 100,
          listSeparator: '|',
          emptyAsClear: false,
          allowAdmin: false,
        },
        source: Readable.from(upload()),
        fileName: 'upload.csv',
      });
      const outcome = submitted.then(
        () => undefined,
        (error: unknown) => error as { code?: string; message: string },
      );
      // the first chunk is staged; then Redis fills up before the next
      const [info] = await waitFor(async () => {
        const [first] = await pipeline.context.store.list();
        return first && (await pipeline.context.store.stagedCount(first.id)) > 0
          ? [first]
          : undefined;
      });
      const importId = info!.id;
      const staged = pipeline.context.store.keys(importId).staged;
      await fill(redis);
      release();
      // the staged rows go at once, though Redis is still too full to record the end
      await waitFor(async () => ((await redis.exists(staged)) === 0 ? true : undefined), {
        what: 'the staged rows to be removed',
      });
      await waitFor(async () => ((await oomRefusals(redis)) >= 3 ? true : undefined), {
        what: 'Redis to refuse the end a few times',
      });
      expect(await pipeline.context.store.getState(importId)).toBe('receiving');

      await makeRoom(redis);
      const error = await outcome;
      expect(error?.code).toBe('PORTER_REDIS_FULL');
      expect(error?.message).toMatch(/Redis is full .*raise its maxmemory/);
      const ended = await pipeline.context.store.get(importId);
      expect(ended).toMatchObject({ state: 'failed', settled: true });
      expect(ended?.reason).toMatch(/Redis is full/);
      expect(await redis.exists(staged)).toBe(0);
    } finally {
      await makeRoom(redis);
      await pipeline.close();
    }
  });

  it('makes batches wait for room mid-import, and tells it once each way', async () => {
    const { lines, logger } = capture();
    const pipeline: Pipeline = await startPipeline({
      redisUrl: node.url,
      logger,
    });
    try {
      const rows = Array.from({ length: 1500 }, (_, index) => [`full.batch${index}`]);
      const submitted = await pipeline.submit(csv(['username'], rows), {
        resource: 'users',
        mode: 'create',
        batchSize: 25,
      });
      await waitFor(async () => {
        const info = await pipeline.context.store.get(submitted.id);
        return info && info.done >= 100 ? true : undefined;
      });
      const before = await oomRefusals(redis);
      await fill(redis);
      // batches meet the full Redis, again and again: on old code each refusal spent a try
      await waitFor(async () => ((await oomRefusals(redis)) >= before + 60 ? true : undefined), {
        timeoutMs: 60_000,
        what: 'batches to meet the full Redis',
      });
      const during = await pipeline.context.store.get(submitted.id);
      expect(during?.settled).toBe(false);
      expect(during?.counts.unprocessed).toBe(0);

      await makeRoom(redis);
      const info = await pipeline.waitFinal(submitted.id, 120_000);
      expect(info.state).toBe('completed');
      expect(info.counts).toMatchObject({ succeeded: 1500, failed: 0, unprocessed: 0 });
      expect(pipeline.sandbox.store.users().length).toBe(1500);

      // no stack-trace flood: nothing at error level, no error object logged at warn
      expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
      expect(lines.filter((line) => Number(line.level) >= 40 && line.err !== undefined)).toEqual(
        [],
      );
      const said = (pattern: RegExp): number =>
        lines.filter((line) => pattern.test(String(line.msg))).length;
      expect(said(/^Redis is full/)).toBe(1);
      expect(said(/^Redis has room again/)).toBe(1);
      // a lock lapses while Redis refuses its renewal: told once per batch in hand, not per try
      expect(lines.filter((line) => Number(line.level) >= 40).length).toBeLessThan(40);
    } finally {
      await makeRoom(redis);
      await pipeline.close();
    }
  });
});

describe('an evicting Redis', () => {
  let node: RedisNode;
  beforeAll(async () => {
    node = await startRedisNode({
      args: ['--maxmemory', '20mb', '--maxmemory-policy', 'allkeys-lru'],
    });
  });
  afterAll(async () => {
    await node?.remove();
  });

  it('is refused at start-up, naming PORTER_ALLOW_EVICTION', async () => {
    await expect(checkRedis(loadEnv({ REDIS_URL: node.url }))).rejects.toMatchObject({
      code: 'PORTER_REDIS_UNSUITABLE',
      message: expect.stringMatching(
        /maxmemory-policy allkeys-lru: when full it evicts keys.*noeviction.*PORTER_ALLOW_EVICTION=true/,
      ),
    });
    const refused = await runPorter(['list'], { REDIS_URL: node.url });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/PORTER_ALLOW_EVICTION=true.*\[PORTER_REDIS_UNSUITABLE\]/);
  });

  it('is accepted with a warning when PORTER_ALLOW_EVICTION=true', async () => {
    const warnings: string[] = [];
    await checkRedis(loadEnv({ REDIS_URL: node.url }), {
      allowEviction: true,
      warn: (message) => warnings.push(message),
    });
    expect(warnings).toEqual([expect.stringMatching(/allkeys-lru.*started anyway/)]);
    const allowed = await runPorter(['list'], {
      REDIS_URL: node.url,
      PORTER_ALLOW_EVICTION: 'true',
    });
    expect(allowed.code).toBe(0);
  });
});
