/**
 * POST /v1/source-imports and GET /v1/sources against a real slapd and the sandbox: a sync of the
 * directory's users started over HTTP completes; the role, the token's target limits and the
 * source's name are checked before the directory is read; a read cut short (a wrong password)
 * answers the CLI's code and reason and stores nothing; a field the route does not take is
 * refused.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { AuditEvent } from '../../src/audit/audit-event.js';
import type { Role } from '../../src/auth/roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import type { Pipeline } from '../helpers/pipeline.js';
import { BASE_DN, PORTER_DN, personLdif, startSlapd, type TestSlapd } from '../helpers/slapd.js';
import { startSyncPipeline, status, writes } from '../sync/sync-fixture.js';

const API_TOKEN = 'source-imports-token-0123456789';
const MAPPING = {
  columns: { uid: 'username', givenName: 'firstName', sn: 'lastName', mail: 'email' },
  ignore: ['dn', 'entryUUID', 'directoryGroups'],
  defaults: { type: 'General User', status: 'Active' },
};

let slapd: TestSlapd;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let dir: string;
const tokens: Record<string, string> = {};

async function makeToken(name: string, role: Role, targets?: string[]): Promise<string> {
  const made = { at: new Date().toISOString(), actionId: name, who: { name: 'test' } };
  return (await securityOf(pipeline.context).tokens.create({ name, role, targets }, made)).token;
}

beforeAll(async () => {
  slapd = await startSlapd({
    ldif: ['ann', 'bob', 'cat']
      .map((uid) => personLdif(`httpsrc.${uid}`, { givenName: uid }))
      .join('\n\n'),
  });
  dir = await mkdtemp(join(tmpdir(), 'porter-source-http-'));
  await writeFile(join(dir, 'porter.secret'), 'porter-secret\n');
  await writeFile(join(dir, 'wrong.secret'), 'not-it\n');
  const source = (secret: string) => ({
    kind: 'ldap',
    url: slapd.url,
    bindDN: PORTER_DN,
    password: { file: join(dir, secret) },
    baseDN: `ou=people,${BASE_DN}`,
    attributes: ['uid', 'givenName', 'sn', 'mail'],
    pageSize: 2,
  });
  await writeFile(
    join(dir, 'sources.json'),
    JSON.stringify({ dir: source('porter.secret'), wrong: source('wrong.secret') }),
  );
  pipeline = await startSyncPipeline(undefined, {
    PORTER_SOURCES_FILE: join(dir, 'sources.json'),
  });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  tokens.viewer = await makeToken('src-viewer', 'viewer');
  tokens.operator = await makeToken('src-operator', 'operator');
  tokens.elsewhere = await makeToken('src-elsewhere', 'admin', ['elsewhere']);
}, 60_000);
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await slapd?.close();
  await rm(dir, { recursive: true, force: true });
});

function post(token: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}/v1/source-imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

async function storedImports(): Promise<number> {
  return (await pipeline.context.store.list({ limit: 1000 })).length;
}

const SYNC = {
  source: 'dir',
  resource: 'users',
  mode: 'sync',
  mapping: MAPPING,
  scopeMatch: '^httpsrc\\.',
};

describe('GET /v1/sources', () => {
  it('lists the sources to a viewer: name, kind, URL, where the secret is read from, never the secret', async () => {
    const response = await fetch(`${baseUrl}/v1/sources`, {
      headers: { authorization: `Bearer ${tokens.viewer}` },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('porter-secret');
    expect(text).not.toContain('not-it');
    const list = JSON.parse(text) as Array<Record<string, unknown>>;
    expect(list.map((source) => source.name)).toEqual(['dir', 'wrong']);
    expect(list[0]).toMatchObject({
      kind: 'ldap',
      url: slapd.url,
      anchorAttribute: 'entryUUID',
      secrets: [expect.stringContaining('porter.secret')],
    });
  });
});

describe('POST /v1/source-imports', () => {
  it("syncs the directory's users into the target, and the audit trail names who started it", async () => {
    const response = await post(tokens.operator!, SYNC);
    expect(response.status, await response.clone().text()).toBe(202);
    const started = (await response.json()) as {
      id: string;
      startedBy: string;
      links: { self: string };
      options: { mode: string; source: { name: string; entries: number } };
    };
    expect(started.startedBy).toBe('token:src-operator');
    expect(started.links.self).toBe(`/v1/imports/${started.id}`);
    expect(started.options.source).toMatchObject({ name: 'dir', entries: 3 });
    const info = await pipeline.waitFinal(started.id);
    expect(info.state, JSON.stringify(info)).toBe('completed');
    expect(info.options.mode).toBe('sync');
    for (const uid of ['ann', 'bob', 'cat'])
      expect(status(pipeline, `httpsrc.${uid}`)).toBe('Active');
    // the imports of a source are listed by its name
    const listed = await fetch(`${baseUrl}/v1/imports?source=dir`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    expect(((await listed.json()) as { id: string }[]).map((one) => one.id)).toEqual([started.id]);

    const audit = await fetch(
      `${baseUrl}/v1/audit?who=token:src-operator&action=import.start&since=1h`,
      { headers: { authorization: `Bearer ${API_TOKEN}` } },
    );
    const events = (await audit.json()) as AuditEvent[];
    expect(events.find((event) => event.phase === 'intent')?.what).toMatchObject({
      source: 'dir',
      resource: 'users',
      mode: 'sync',
    });
    expect(events.find((event) => event.phase === 'result')?.what).toMatchObject({
      id: started.id,
      source: 'dir',
      resource: 'users',
      mode: 'sync',
    });
  }, 60_000);

  it('a viewer is refused, and a token limited to other targets is refused before the directory is read', async () => {
    const before = await storedImports();
    const viewer = await post(tokens.viewer!, SYNC);
    expect(viewer.status).toBe(403);
    expect((await errorOf(viewer)).message).toContain('needs the operator role');
    // the source's password is wrong: had the directory been read, the answer would say so
    const limited = await post(tokens.elsewhere!, { ...SYNC, source: 'wrong' });
    expect(limited.status).toBe(403);
    const refusal = await errorOf(limited);
    expect(refusal.code).toBe('PORTER_FORBIDDEN');
    expect(refusal.message).toContain('limited to target elsewhere');
    expect(await storedImports()).toBe(before);
  });

  it('an unknown source is 400 PORTER_SOURCE_UNKNOWN naming the known ones', async () => {
    const before = await storedImports();
    const response = await post(tokens.operator!, { ...SYNC, source: 'nope' });
    expect(response.status).toBe(400);
    const error = await errorOf(response);
    expect(error.code).toBe('PORTER_SOURCE_UNKNOWN');
    expect(error.message).toContain('known: dir, wrong');
    expect(await storedImports()).toBe(before);
  });

  it('a read cut short (a wrong password) is 502 PORTER_SOURCE_FAILED with the reason; nothing stored or written', async () => {
    const before = { imports: await storedImports(), writes: writes(pipeline) };
    const response = await post(tokens.operator!, { ...SYNC, source: 'wrong' });
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).not.toContain('not-it');
    const error = (JSON.parse(text) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('PORTER_SOURCE_FAILED');
    expect(error.message).toContain('invalid credentials');
    expect(await storedImports()).toBe(before.imports);
    expect(writes(pipeline)).toBe(before.writes);
  });

  it('refuses a field it does not take (a file option, a misspelling) and ACLs, before reading', async () => {
    const before = await storedImports();
    for (const [body, field] of [
      [{ ...SYNC, delimiter: ';' }, 'delimiter'],
      [{ ...SYNC, dryrun: true }, 'dryrun'],
      [{ ...SYNC, resource: 'acls' }, 'resource'],
      [{ ...SYNC, incremental: 'often' }, 'incremental'],
    ] as const) {
      const response = await post(tokens.operator!, body);
      expect(response.status, field).toBe(400);
      const error = (await response.json()) as {
        error: { code: string; details: { field: string } };
      };
      expect(error.error.code, field).toBe('PORTER_USAGE');
      expect(error.error.details.field, field).toBe(field);
    }
    expect(await storedImports()).toBe(before);
  });

  it('an incremental dry run plans the entries changed since the last read as upserts', async () => {
    const response = await post(tokens.operator!, { ...SYNC, incremental: true, dryRun: true });
    expect(response.status, await response.clone().text()).toBe(202);
    const started = (await response.json()) as {
      id: string;
      options: { mode: string; source: { since?: string } };
    };
    expect(started.options.mode).toBe('upsert');
    expect(started.options.source.since).toBeDefined();
    expect((await pipeline.waitFinal(started.id)).state).toBe('completed');
  }, 60_000);
});
