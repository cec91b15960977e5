/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/**
 * SCIM on a read-only target (`readOnly: true` in the targets file): every write, and every
 * operation of a /Bulk, is refused with a SCIM error body before anything reaches the DAM;
 * reads work. Real HTTP, two sandboxes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { scimRequest, type ScimAnswer } from '../helpers/scim-request.js';

const API_TOKEN = 'read-only-scim-token-0123456789';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
let dir: string;
let frozen: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

const scim = (method: string, path: string, body?: unknown): Promise<ScimAnswer> =>
  scimRequest(`${baseUrl}/scim/v2/frozen${path}`, API_TOKEN, method, body);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-scim-ro-'));
  frozen = await startSandbox({ port: 0 });
  frozen.store.putUser({
    userId: 7,
    username: 'kept',
    type: 'General User',
    status: 'Active',
  } as any);
  const targets = join(dir, 'targets.json');
  await writeFile(targets, JSON.stringify({ frozen: { url: frozen.url, readOnly: true } }));
  pipeline = await startPipeline({ workers: false, env: { PORTER_TARGETS_FILE: targets } });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await frozen?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SCIM on a read-only target', () => {
  it('refuses every write with a SCIM error body, and changes nothing', async () => {
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/Users', { userName: 'new.one' }],
      ['PUT', '/Users/7', { userName: 'renamed' }],
      ['PATCH', '/Users/7', { Operations: [{ op: 'replace', path: 'active', value: false }] }],
      ['DELETE', '/Users/7', undefined],
      ['POST', '/Groups', { displayName: 'New group' }],
    ];
    for (const [method, path, body] of writes) {
      const answer = await scim(method, path, body);
      expect(answer.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(answer.status, `${method} ${path}`).toBeLessThan(500);
      expect(answer.body.schemas).toEqual([ERROR_SCHEMA]);
      expect(answer.body.code).toBe('PORTER_TARGET_READ_ONLY');
    }
    const bulk = await scim('POST', '/Bulk', {
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'a', data: { userName: 'bulk.one' } },
        { method: 'DELETE', path: '/Users/7' },
      ],
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.Operations.map((op: any) => op.response?.code)).toEqual([
      'PORTER_TARGET_READ_ONLY',
      'PORTER_TARGET_READ_ONLY',
    ]);
    expect(
      [...frozen.store.allUsers()].map((user) => [user.userId, user.username, user.status]),
    ).toEqual([[7, 'kept', 'Active']]);
    expect([...frozen.store.allGroups()]).toEqual([]);
  });

  it('still answers reads', async () => {
    const list = await scim('GET', '/Users');
    expect(list.status).toBe(200);
    expect(list.body.Resources.map((user: any) => user.userName)).toEqual(['kept']);
  });
});
