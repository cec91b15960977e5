/** /v1/import-schedules over fastify's inject: bearer auth, list, one with its runs, remove. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addImportSchedule } from '../../src/app/import-schedules.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { ScheduleHistory } from '../../src/imports/schedule-history.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const TOKEN = 'import-schedule-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let pipeline: Pipeline;
let app: FastifyInstance;

beforeAll(async () => {
  // no workers: the schedule never fires here, its runs are written by the test
  pipeline = await startPipeline({ workers: false });
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.context.importScheduleQueue.obliterate({ force: true }).catch(() => {});
  await pipeline?.close();
});

describe('/v1/import-schedules', () => {
  it('needs the token, lists, shows one with its runs, and removes it', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/import-schedules' })).statusCode).toBe(401);
    expect(
      (await app.inject({ method: 'GET', url: '/v1/import-schedules', headers: auth })).json(),
    ).toEqual([]);

    await addImportSchedule(pipeline.context, {
      name: 'hr',
      cron: '0 6 * * *',
      tz: 'Europe/Berlin',
      request: {
        file: '/srv/hr/users.csv',
        options: {
          resource: 'users',
          mode: 'upsert',
          batchSize: 100,
          listSeparator: '|',
          emptyAsClear: false,
          allowAdmin: false,
        },
      },
    });
    const history = new ScheduleHistory({
      redis: pipeline.context.redis,
      prefix: pipeline.context.env.PORTER_PREFIX,
    });
    await history.add('hr', { at: '2026-01-01T05:00:00.000Z', outcome: 'failed', note: 'gone' });

    const list = await app.inject({ method: 'GET', url: '/v1/import-schedules', headers: auth });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([
      expect.objectContaining({
        kind: 'import',
        name: 'hr',
        cron: '0 6 * * *',
        tz: 'Europe/Berlin',
        request: expect.objectContaining({
          file: '/srv/hr/users.csv',
          options: expect.objectContaining({ resource: 'users', mode: 'upsert' }),
        }),
        next: expect.any(String),
      }),
    ]);
    const one = await app.inject({ method: 'GET', url: '/v1/import-schedules/hr', headers: auth });
    expect(one.json()).toMatchObject({
      name: 'hr',
      runs: [{ outcome: 'failed', note: 'gone', at: '2026-01-01T05:00:00.000Z' }],
    });

    const removed = await app.inject({
      method: 'DELETE',
      url: '/v1/import-schedules/hr',
      headers: auth,
    });
    expect(removed.statusCode).toBe(204);
    for (const method of ['GET', 'DELETE'] as const) {
      const gone = await app.inject({ method, url: '/v1/import-schedules/hr', headers: auth });
      expect(gone.statusCode).toBe(404);
      expect(gone.json()).toMatchObject({ error: { code: 'PORTER_NOT_FOUND' } });
    }
  });

  it('is described in the OpenAPI document', async () => {
    const docs = (await app.inject({ method: 'GET', url: '/docs/json', headers: auth })).json<{
      paths: Record<string, unknown>;
    }>();
    expect(Object.keys(docs.paths)).toEqual(
      expect.arrayContaining(['/v1/import-schedules', '/v1/import-schedules/{name}']),
    );
  });
});
