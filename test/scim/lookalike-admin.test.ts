/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/**
 * Look-alike accounts and admins through SCIM, over real HTTP against the sandbox. A userName
 * or group displayName that a reader cannot tell from one the DAM holds (a Cyrillic letter,
 * full-width letters, an invisible joiner, a space at an end, another Unicode normal form) must
 * be refused as `uniqueness`, as imports refuse look-alikes (src/ingest/lookalike.ts); and a
 * mapping (PORTER_SCIM_MAPPING_FILE) that computes the DAM `type` must not change an existing
 * user's type (the imports' admin guard, src/plan/admin-guard.ts).
 *
 * The write path (src/app/scim.ts) compares names by their look-alike key and refuses a PUT or
 * PATCH whose mapping would change the user's type (PORTER_ADMIN_GUARD, 403).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { DEFAULT_SCIM_USER_MAPPING } from '../../src/scim/default-mapping.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { scimRequest, type ScimAnswer } from '../helpers/scim-request.js';

const API_TOKEN = 'lookalike-scim-token-0123456789';
let dir: string;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

const scim = (method: string, path: string, body?: unknown): Promise<ScimAnswer> =>
  scimRequest(`${baseUrl}/scim/v2/default${path}`, API_TOKEN, method, body);

function damUser(name: string): any {
  return [...pipeline.sandbox.store.allUsers()].find((user) => user.username === name);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-scim-lookalike-'));
  const mapping = join(dir, 'scim-mapping.json');
  // an operator's mapping that makes a title into a user type
  await writeFile(
    mapping,
    JSON.stringify({
      fields: {
        ...DEFAULT_SCIM_USER_MAPPING.fields,
        type: "title = 'IT lead' ? 'Global Administrator' : 'General User'",
      },
    }),
  );
  pipeline = await startPipeline({ workers: false, env: { PORTER_SCIM_MAPPING_FILE: mapping } });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const admin = pipeline.context.createAdminClient();
  await admin.postUsers([
    { username: 'admin', email: 'admin@example.com', type: 'Global Administrator' },
  ]);
  await admin.postGroups([{ name: 'Administrators' }]);
  await admin.close();
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

const LOOKALIKES: Array<[string, string]> = [
  ['Cyrillic а', '\u0430dmin'],
  ['full-width letters', '\uFF41\uFF44\uFF4D\uFF49\uFF4E'],
  ['a zero-width joiner', 'ad\u200Dmin'],
  ['a trailing space', 'admin '],
  ['a leading space', ' admin'],
  ['a dotless ı', 'adm\u0131n'],
];

describe('SCIM look-alikes', () => {
  it('a userName differing from one held only in case is refused as uniqueness', async () => {
    const answer = await scim('POST', '/Users', { userName: 'ADMIN' });
    expect(answer.status).toBe(409);
    expect(answer.body.scimType).toBe('uniqueness');
  });

  for (const [what, name] of LOOKALIKES) {
    it(`a userName with ${what} beside "admin" is refused as uniqueness`, async () => {
      const answer = await scim('POST', '/Users', { userName: name });
      expect(answer.status, JSON.stringify(answer.body)).toBe(409);
      expect(answer.body.scimType).toBe('uniqueness');
      expect(damUser(name)).toBeUndefined();
    });
  }

  it('NFC and NFD spellings of one name are one userName', async () => {
    expect((await scim('POST', '/Users', { userName: 'jos\u00E9' })).status).toBe(201);
    const decomposed = await scim('POST', '/Users', { userName: 'jose\u0301' });
    expect(decomposed.status).toBe(409);
  });

  it('a rename to a look-alike of "admin" is refused as uniqueness', async () => {
    const created = await scim('POST', '/Users', { userName: 'plain.user' });
    expect(created.status).toBe(201);
    const renamed = await scim('PATCH', `/Users/${created.body.id}`, {
      Operations: [{ op: 'replace', path: 'userName', value: 'adm\u03B9n' }], // Greek ι
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(409);
    expect(damUser('plain.user')).toBeDefined();
  });

  it('a group displayName that looks like "Administrators" is refused as uniqueness', async () => {
    const answer = await scim('POST', '/Groups', { displayName: 'Adm\u0456nistrators' });
    expect(answer.status).toBe(409);
    expect(answer.body.scimType).toBe('uniqueness');
  });
});

describe('SCIM and the user type', () => {
  it('a create is always a General User, whatever the mapping computes', async () => {
    const created = await scim('POST', '/Users', { userName: 'new.lead', title: 'IT lead' });
    expect(created.status).toBe(201);
    expect(damUser('new.lead').type).toBe('General User');
  });

  it('a PATCH whose mapping computes another type does not make a Global Administrator', async () => {
    const created = await scim('POST', '/Users', { userName: 'mallory', title: 'Designer' });
    expect(created.status).toBe(201);
    const patched = await scim('PATCH', `/Users/${created.body.id}`, {
      Operations: [{ op: 'replace', path: 'title', value: 'IT lead' }],
    });
    expect(damUser('mallory').type).toBe('General User');
    expect(patched.status).toBe(403);
    expect(patched.body.code).toBe('PORTER_ADMIN_GUARD');
  });

  it('a PUT whose mapping computes General User does not demote an administrator', async () => {
    const id = String(damUser('admin').userId);
    const put = await scim('PUT', `/Users/${id}`, { userName: 'admin', title: 'Designer' });
    expect(damUser('admin').type).toBe('Global Administrator');
    expect(put.body.code).toBe('PORTER_ADMIN_GUARD');
  });
});
