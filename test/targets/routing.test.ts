/**
 * One worker pool, several targets: every job lands on its own target's server, and a job whose
 * target is unknown to the worker or was configured otherwise is refused with nothing sent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPorterContext, type PorterContext } from '../../src/app/context.js';
import { cancelImport, startImport } from '../../src/app/imports.js';
import { loadEnv } from '../../src/config/env.js';
import type { ImportOptions } from '../../src/model/import.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { silentLogger } from '../../src/util/logger.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';

let pipeline: Pipeline;
let other: RunningSandbox;
let third: RunningSandbox;
let down: RunningSandbox;
let dir: string;
let targetsPath: string;
const producers: PorterContext[] = [];

const BASE: Omit<ImportOptions, 'resource' | 'mode'> = {
  batchSize: 10,
  listSeparator: '|',
  emptyAsClear: false,
  allowAdmin: false,
};

function usersCsv(prefix: string, count: number): string {
  return csv(
    ['username', 'email'],
    Array.from({ length: count }, (_, index) => [
      `${prefix}${index}`,
      `${prefix}${index}@example.com`,
    ]),
  );
}

function upload(text: string): Readable {
  return Readable.from([Buffer.from(text)]);
}

/** A producer context of its own over the pipeline's Redis and prefix, with other targets. */
async function producer(env: Record<string, string>): Promise<PorterContext> {
  const context = await createPorterContext(
    loadEnv({
      REDIS_URL: pipeline.context.env.REDIS_URL,
      PORTER_PREFIX: pipeline.context.env.PORTER_PREFIX,
      ...env,
    }),
    { logger: silentLogger },
  );
  producers.push(context);
  return context;
}

const usernames = (sandbox: RunningSandbox): string[] =>
  sandbox.store
    .users()
    .map((user) => String(user.username))
    .sort();
const writes = (sandbox: RunningSandbox): number => {
  const { PUT, POST, DELETE } = sandbox.store.stats.requests;
  return PUT + POST + DELETE;
};

beforeAll(async () => {
  other = await startSandbox({ port: 0 });
  third = await startSandbox({ port: 0 });
  // every request answered 503
  down = await startSandbox({ port: 0, faults: { failRate: 1 } });
  dir = await mkdtemp(join(tmpdir(), 'porter-routing-'));
  targetsPath = join(dir, 'targets.json');
  await writeFile(
    targetsPath,
    JSON.stringify({
      second: { url: other.url },
      archive: { url: third.url, readOnly: true },
      down: { url: down.url },
    }),
  );
  pipeline = await startPipeline({
    env: { PORTER_TARGETS_FILE: targetsPath, PORTER_BREAKER_COOLDOWN_MS: '60000' },
  });
});

afterAll(async () => {
  await Promise.all(producers.map((context) => context.close()));
  await pipeline?.close();
  await other?.close();
  await third?.close();
  await down?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('one worker pool, two targets', () => {
  it('lands interleaved imports on their own servers, each holding exactly its own records', async () => {
    const submitted = [];
    for (let round = 0; round < 3; round++) {
      submitted.push(
        await pipeline.submit(usersCsv(`main${round}-`, 25), {
          resource: 'users',
          mode: 'create',
          batchSize: 10,
        }),
        await pipeline.submit(usersCsv(`second${round}-`, 25), {
          resource: 'users',
          mode: 'create',
          batchSize: 10,
          target: 'second',
        }),
      );
    }
    const finals = await Promise.all(submitted.map((info) => pipeline.waitFinal(info.id)));
    for (const info of finals) expect(info.counts.succeeded).toBe(25);
    expect(finals.map((info) => info.options.target)).toEqual([
      'default',
      'second',
      'default',
      'second',
      'default',
      'second',
    ]);
    const expected = (prefix: string) =>
      [0, 1, 2]
        .flatMap((round) => Array.from({ length: 25 }, (_, index) => `${prefix}${round}-${index}`))
        .sort();
    expect(usernames(pipeline.sandbox)).toEqual(expected('main'));
    expect(usernames(other)).toEqual(expected('second'));
    // each created its 75 users in calls of 10, on its own server only
    expect(pipeline.sandbox.store.stats.applied.users.created).toBe(75);
    expect(other.store.stats.applied.users.created).toBe(75);
  });
});

describe('a job the workers must refuse', () => {
  it('refuses an unknown target at submission: nothing is stored or sent', async () => {
    await expect(
      pipeline.submit(usersCsv('ghost-', 3), {
        resource: 'users',
        mode: 'create',
        target: 'nowhere',
      }),
    ).rejects.toMatchObject({ code: 'PORTER_TARGET_UNKNOWN' });
  });

  it('fails a job whose target the workers do not know, sending nothing', async () => {
    const before = { main: writes(pipeline.sandbox), other: writes(other), third: writes(third) };
    const file = join(dir, 'producer-only.json');
    await writeFile(file, JSON.stringify({ elsewhere: { url: third.url } }));
    const submitter = await producer({
      PORTER_TARGETS_FILE: file,
      ADMIN_BASE_URL: pipeline.sandbox.url,
    });
    const info = await startImport(submitter, {
      options: { ...BASE, resource: 'users', mode: 'create', target: 'elsewhere' },
      source: upload(usersCsv('lost-', 12)),
      fileName: 'lost.csv',
    });
    const final = await pipeline.waitFinal(info.id);
    expect(final.state).toBe('failed');
    expect(final.reason).toMatch(/no target "elsewhere"/);
    expect(final.counts.unprocessed).toBe(12);
    const results = await pipeline.results(info.id);
    expect(new Set(results.map((result) => result.errorCode))).toEqual(
      new Set(['PORTER_TARGET_UNKNOWN']),
    );
    expect({ main: writes(pipeline.sandbox), other: writes(other), third: writes(third) }).toEqual(
      before,
    );
    expect(usernames(third)).toEqual([]);
  });

  it('fails a job whose target was configured with another URL between submission and run', async () => {
    const before = { main: writes(pipeline.sandbox), other: writes(other), third: writes(third) };
    // the submitter's `second` is the third sandbox; the workers' `second` is the other one
    const file = join(dir, 'moved.json');
    await writeFile(file, JSON.stringify({ second: { url: third.url } }));
    const submitter = await producer({
      PORTER_TARGETS_FILE: file,
      ADMIN_BASE_URL: pipeline.sandbox.url,
    });
    const info = await startImport(submitter, {
      options: { ...BASE, resource: 'users', mode: 'upsert', target: 'second' },
      source: upload(usersCsv('moved-', 7)),
      fileName: 'moved.csv',
    });
    const final = await pipeline.waitFinal(info.id);
    expect(final.state).toBe('failed');
    expect(final.reason).toMatch(/target "second" was submitted for .* but is configured here/);
    const results = await pipeline.results(info.id);
    expect(results.every((result) => result.errorCode === 'PORTER_TARGET_CHANGED')).toBe(true);
    expect({ main: writes(pipeline.sandbox), other: writes(other), third: writes(third) }).toEqual(
      before,
    );
  });

  it("never writes to the workers' server when a command names another ADMIN_BASE_URL", async () => {
    const before = { main: writes(pipeline.sandbox), third: writes(third) };
    const file = join(dir, 'feed.csv');
    await writeFile(file, usersCsv('wrong-', 30));
    const run = await runPorter(
      ['import', file, '--resource', 'users', '--mode', 'upsert', '--wait'],
      {
        REDIS_URL: pipeline.context.env.REDIS_URL,
        PORTER_PREFIX: pipeline.context.env.PORTER_PREFIX,
        // the command's server is the third sandbox; the workers' `default` is the pipeline's
        ADMIN_BASE_URL: third.url,
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /target "default" was submitted for http:\/\/127.0.0.1:\d+ but is configured here/,
    );
    expect(writes(pipeline.sandbox)).toBe(before.main);
    expect(writes(third)).toBe(before.third);
    expect(usernames(pipeline.sandbox).filter((name) => name.startsWith('wrong-'))).toEqual([]);
  });
});

describe('a read-only target', () => {
  it('refuses every write before anything is sent, and a dry run still plans', async () => {
    const file = join(dir, 'archive.csv');
    await writeFile(file, usersCsv('arch-', 5));
    const env = {
      REDIS_URL: pipeline.context.env.REDIS_URL,
      PORTER_PREFIX: pipeline.context.env.PORTER_PREFIX,
      ADMIN_BASE_URL: pipeline.sandbox.url,
      PORTER_TARGETS_FILE: targetsPath,
    };
    const refused = await runPorter(
      ['import', file, '--resource', 'users', '--mode', 'create', '--target', 'archive', '--wait'],
      env,
    );
    expect(refused.code).toBe(65);
    expect(refused.stderr).toContain('[PORTER_TARGET_READ_ONLY]');
    const planned = await runPorter(
      [
        'import',
        file,
        '--resource',
        'users',
        '--mode',
        'create',
        '--target',
        'archive',
        '--dry-run',
        '--wait',
      ],
      env,
    );
    expect(planned.code).toBe(0);
    expect(planned.stderr).toMatch(/5 planned|planned: 5|5 create/);
    expect(writes(third)).toBe(0);
    // the client itself refuses too, whatever asks it
    const client = pipeline.context.createAdminClient(1, 'archive');
    try {
      await expect(client.postUsers([{ username: 'x' } as never])).rejects.toMatchObject({
        code: 'PORTER_TARGET_READ_ONLY',
      });
    } finally {
      await client.close();
    }
    expect(writes(third)).toBe(0);
  });
});

describe('one target down', () => {
  it("pauses that target's import only; the other target's import completes", async () => {
    // an update reads each record first: every read fails, and the breaker pauses the import
    const stuck = await pipeline.submit(usersCsv('stuck-', 120), {
      resource: 'users',
      mode: 'update',
      batchSize: 10,
      lookup: 'each',
      target: 'down',
    });
    const paused = await waitFor(
      async () => {
        const info = await pipeline.context.store.get(stuck.id);
        return info?.state === 'paused' ? info : undefined;
      },
      { what: 'the import on the failing target to pause' },
    );
    expect(paused.reason).toMatch(/failed|503/);
    const healthy = await pipeline.run(usersCsv('healthy-', 60), {
      resource: 'users',
      mode: 'create',
      batchSize: 10,
      target: 'second',
    });
    expect(healthy.info.counts.succeeded).toBe(60);
    expect((await pipeline.context.store.get(stuck.id))?.state).toBe('paused');
    expect(down.store.stats.applied.users).toEqual({ created: 0, updated: 0, deleted: 0 });
    await cancelImport(pipeline.context, stuck.id);
  });
});
