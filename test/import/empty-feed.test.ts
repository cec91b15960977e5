/**
 * An empty daily feed (a day with no new hires): a CSV with its header and no row, or a JSON
 * empty array, is an import of 0 records that ends `completed`, exit 0, on the command line,
 * over HTTP, in a watched folder and in a schedule. A sync still refuses it (it would mean that
 * everyone left), and a file with nothing in it at all is still refused.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addImportSchedule,
  deleteImportSchedule,
  importScheduleRuns,
} from '../../src/app/import-schedules.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import { startWatch, USERS_CREATE } from '../watch/watch-fixture.js';

const TOKEN = 'empty-feed-token-0123456789';
const HEADER_ONLY = 'username,email,firstName\n';

let pipeline: Pipeline;
let app: FastifyInstance;
let dir: string;
let headerOnly: string;

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), 'porter-empty-feed-'));
  headerOnly = join(dir, 'new-hires.csv');
  await writeFile(headerOnly, HEADER_ONLY);
});
afterAll(async () => {
  await app?.close();
  await pipeline?.context.importScheduleQueue.obliterate({ force: true }).catch(() => {});
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('on the command line', () => {
  it('a header-only CSV for create or upsert: completed with 0 records, exit 0', async () => {
    for (const mode of ['create', 'upsert']) {
      const run = await runPorter(
        ['import', headerOnly, '--resource', 'users', '--mode', mode, '--wait'],
        pipeline.childEnv(),
      );
      expect(run.code, run.stderr).toBe(0);
      const info = await pipeline.waitFinal(run.stdout.trim());
      expect(info).toMatchObject({
        state: 'completed',
        total: 0,
        settled: true,
        columns: ['username', 'email', 'firstName'],
      });
    }
    const json = join(dir, 'hires.json');
    await writeFile(json, '[]');
    const fromJson = await runPorter(
      ['import', json, '--resource', 'users', '--mode', 'create', '--wait'],
      pipeline.childEnv(),
    );
    expect(fromJson.code, fromJson.stderr).toBe(0);
  });

  it('a sync of a header-only file is still refused; so is a file with nothing at all', async () => {
    const sync = await runPorter(['sync', headerOnly, '--resource', 'users'], pipeline.childEnv());
    expect(sync.code).toBe(1);
    expect(sync.stderr).toMatch(
      /would lock or delete every record in its scope.*PORTER_INPUT_EMPTY/,
    );
    const nothing = join(dir, 'nothing.csv');
    await writeFile(nothing, '');
    const empty = await runPorter(
      ['import', nothing, '--resource', 'users', '--mode', 'create', '--wait'],
      pipeline.childEnv(),
    );
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('PORTER_INPUT_EMPTY');
  });

  it('a header that names an unknown column is still refused', async () => {
    const bad = join(dir, 'bad.csv');
    await writeFile(bad, 'username,shoeSize\n');
    const run = await runPorter(
      ['import', bad, '--resource', 'users', '--mode', 'create', '--wait'],
      pipeline.childEnv(),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('PORTER_INPUT_UNKNOWN_COLUMN');
  });
});

describe('over HTTP, in a watched folder and in a schedule', () => {
  it('HTTP: 202, then completed with 0 records; a sync is 400 PORTER_INPUT_EMPTY', async () => {
    const post = (mode: string) =>
      app.inject({
        method: 'POST',
        url: `/v1/imports?resource=users&mode=${mode}`,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
        payload: HEADER_ONLY,
      });
    const created = await post('create');
    expect(created.statusCode, created.body).toBe(202);
    const info = await pipeline.waitFinal((created.json() as { id: string }).id);
    expect(info).toMatchObject({ state: 'completed', total: 0 });
    const sync = await post('sync');
    expect(sync.statusCode).toBe(400);
    expect(sync.json()).toMatchObject({ error: { code: 'PORTER_INPUT_EMPTY' } });
  });

  it('a watched folder moves an empty feed to processed/', async () => {
    const folder = await mkdtemp(join(dir, 'watch-'));
    await writeFile(join(folder, 'monday.csv'), HEADER_ONLY);
    const running = startWatch(pipeline, folder, { options: USERS_CREATE });
    try {
      const moved = await running.moved('monday.csv');
      expect(moved).toMatchObject({ to: 'processed', state: 'completed' });
    } finally {
      await running.stop();
    }
  });

  it('a scheduled import of an empty feed is a completed import', async () => {
    const file = join(dir, 'scheduled.csv');
    await writeFile(file, HEADER_ONLY);
    await addImportSchedule(pipeline.context, {
      name: 'empty-feed',
      cron: '*/1 * * * * *',
      request: { file, options: { ...USERS_CREATE, mode: 'upsert' } },
    });
    try {
      const runs = await waitFor(
        async () => {
          const all = await importScheduleRuns(pipeline.context, 'empty-feed', 20);
          return all.find((run) => run.outcome !== 'unchanged') ? all : undefined;
        },
        { timeoutMs: 30_000, what: 'the scheduled run' },
      );
      const run = runs.find((one) => one.outcome !== 'unchanged')!;
      expect(run, JSON.stringify(run)).toMatchObject({ outcome: 'imported' });
      expect(await pipeline.waitFinal(run.importId!)).toMatchObject({
        state: 'completed',
        total: 0,
      });
    } finally {
      await deleteImportSchedule(pipeline.context, 'empty-feed');
    }
  });
});
