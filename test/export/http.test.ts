/**
 * /v1/exports and /v1/schedules over real HTTP: bearer auth, queued exports and their state,
 * streamed downloads of the files a manifest lists (and nothing else), schedules CRUD.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportInfo } from '../../src/export/export-types.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startExportHarness, type ExportHarness } from './export-fixture.js';

const TOKEN = 'export-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
let harness: ExportHarness;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  harness = await startExportHarness({ sandbox: { seed: { users: 5_000, groups: 4, acls: 4 } } });
  app = await buildApiApp({ context: harness.pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await harness?.close();
});

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(baseUrl + path, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

type ExportAnswer = ExportInfo & { links: Record<string, string> };

async function exportAndWait(body: unknown): Promise<ExportAnswer> {
  const response = await post('/v1/exports', body);
  expect(response.status).toBe(202);
  const queued = (await response.json()) as ExportAnswer;
  await harness.waitExport(queued.id);
  return (await (
    await fetch(`${baseUrl}${queued.links.self}`, { headers: auth })
  ).json()) as ExportAnswer;
}

describe('auth', () => {
  it.each([
    ['GET', '/v1/exports'],
    ['POST', '/v1/exports'],
    ['GET', '/v1/exports/exp_20260101T000000000Z_aaaaaa/files/users.csv'],
    ['GET', '/v1/schedules'],
    ['POST', '/v1/schedules'],
    ['DELETE', '/v1/schedules/nightly'],
  ])('%s %s needs the bearer token', async (method, path) => {
    const response = await fetch(baseUrl + path, { method });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'PORTER_UNAUTHORIZED' } });
  });
});

describe('/v1/exports', () => {
  it('queues an export (202) and answers its state, counts and file links when it completes', async () => {
    const info = await exportAndWait({ resource: 'users', format: 'csv' });
    expect(info).toMatchObject({
      state: 'completed',
      request: { resource: 'users', format: 'csv', outDir: harness.outDir },
      counts: { users: 5_000 },
      written: 5_000,
      files: [expect.objectContaining({ name: 'users.csv', records: 5_000 })],
    });
    expect(info.links).toMatchObject({
      'users.csv': `/v1/exports/${info.id}/files/users.csv`,
      'manifest.json': `/v1/exports/${info.id}/files/manifest.json`,
    });
    const list = (await (
      await fetch(`${baseUrl}/v1/exports`, { headers: auth })
    ).json()) as ExportAnswer[];
    expect(list.map((item) => item.id)).toContain(info.id);
  });

  it('streams a file download byte for byte, in several chunks', async () => {
    const info = await exportAndWait({ resource: 'all', format: 'csv' });
    const response = await fetch(`${baseUrl}${info.links['users.csv']}`, { headers: auth });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="${info.id}-users.csv"`,
    );
    const onDisk = await readFile(join(info.dir, 'users.csv'));
    expect(Number(response.headers.get('content-length'))).toBe(onDisk.length);
    let chunks = 0;
    const parts: Uint8Array[] = [];
    for await (const chunk of response.body!) {
      chunks++;
      parts.push(chunk);
    }
    expect(chunks).toBeGreaterThan(1);
    expect(Buffer.concat(parts).equals(onDisk)).toBe(true);
    const manifest = await fetch(`${baseUrl}${info.links['manifest.json']}`, { headers: auth });
    expect(await manifest.json()).toMatchObject({ id: info.id, counts: info.counts });
  });

  it.each([
    'secrets.txt',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e%2fmanifest.json',
    'users.json',
    '.users.csv.0123456789ab.porter-tmp',
  ])('answers 404 for a name its manifest does not list: %s', async (name) => {
    const info = await exportAndWait({ resource: 'users', format: 'csv' });
    const response = await fetch(`${baseUrl}/v1/exports/${info.id}/files/${name}`, {
      headers: auth,
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'PORTER_NOT_FOUND' } });
  });

  it('answers 409 for a file of an export that has not completed', async () => {
    const { context } = harness.pipeline;
    // a state with no job: it stays queued
    const id = 'exp_20260101T000000000Z_queued';
    await context.exportStore.create({
      id,
      request: { resource: 'users', format: 'csv', outDir: harness.outDir },
      dir: join(harness.outDir, id),
    });
    const early = await fetch(`${baseUrl}/v1/exports/${id}/files/users.csv`, { headers: auth });
    expect(early.status).toBe(409);
    expect(await early.json()).toMatchObject({ error: { code: 'PORTER_CONFLICT' } });
    const other = await fetch(`${baseUrl}/v1/exports/${id}/files/groups.csv`, { headers: auth });
    expect(other.status).toBe(404);
  });

  it('answers 404 for an unknown export', async () => {
    for (const path of ['/v1/exports/exp_20260101T000000000Z_zzzzzz', '/v1/exports/nope/files/a']) {
      const response = await fetch(baseUrl + path, { headers: auth });
      expect(response.status).toBe(404);
    }
  });

  it('writes into a relative subdirectory of the export directory, and nowhere else', async () => {
    const info = await exportAndWait({ resource: 'groups', format: 'json', out: 'team-a' });
    expect(info.dir).toBe(join(harness.outDir, 'team-a', info.id));
    for (const out of ['/etc', '../outside', 'a/../../b']) {
      const response = await post('/v1/exports', { resource: 'groups', out });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'PORTER_USAGE' } });
    }
  });

  it('refuses a bad body with 400', async () => {
    for (const body of [{ resource: 'people' }, { resource: 'users', format: 'bundle' }, {}]) {
      const response = await post('/v1/exports', body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'PORTER_USAGE' } });
    }
  });

  it('is described in the OpenAPI document', async () => {
    const docs = (await (await fetch(`${baseUrl}/docs/json`, { headers: auth })).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(docs.paths)).toEqual(
      expect.arrayContaining([
        '/v1/exports',
        '/v1/exports/{id}',
        '/v1/exports/{id}/files/{name}',
        '/v1/schedules',
        '/v1/schedules/{name}',
      ]),
    );
  });
});

describe('/v1/schedules', () => {
  it('creates (201), lists, reads and removes (204) a schedule', async () => {
    const created = await post('/v1/schedules', {
      name: 'nightly',
      cron: '0 2 * * *',
      tz: 'Europe/Berlin',
      resource: 'all',
      format: 'csv',
      keep: 14,
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      name: 'nightly',
      cron: '0 2 * * *',
      tz: 'Europe/Berlin',
      keep: 14,
      request: { resource: 'all', format: 'csv', outDir: harness.outDir },
      next: expect.any(String),
    });
    const list = await (await fetch(`${baseUrl}/v1/schedules`, { headers: auth })).json();
    expect(list).toEqual([expect.objectContaining({ name: 'nightly' })]);
    const one = await fetch(`${baseUrl}/v1/schedules/nightly`, { headers: auth });
    expect(await one.json()).toMatchObject({ name: 'nightly' });
    const removed = await fetch(`${baseUrl}/v1/schedules/nightly`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(removed.status).toBe(204);
    const again = await fetch(`${baseUrl}/v1/schedules/nightly`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(again.status).toBe(404);
    expect((await fetch(`${baseUrl}/v1/schedules/nightly`, { headers: auth })).status).toBe(404);
  });

  it('refuses a bad cron pattern or time zone with 400 and says why', async () => {
    const badCron = await post('/v1/schedules', {
      name: 'bad',
      cron: '99 * * * *',
      resource: 'users',
    });
    expect(badCron.status).toBe(400);
    expect(await badCron.json()).toMatchObject({
      error: { code: 'PORTER_USAGE', message: expect.stringMatching(/Cron pattern/) },
    });
    const badZone = await post('/v1/schedules', {
      name: 'bad',
      cron: '0 2 * * *',
      tz: 'Nowhere/Land',
      resource: 'users',
    });
    expect(badZone.status).toBe(400);
    expect(await badZone.json()).toMatchObject({
      error: { message: expect.stringMatching(/Unknown time zone/) },
    });
    const list = await (await fetch(`${baseUrl}/v1/schedules`, { headers: auth })).json();
    expect(list).toEqual([]);
  });
});
