/**
 * Target limits on every route: a token limited to the target `other` walks every route of the
 * API (every GET and its HEAD, as the OpenAPI document lists them, and the routes that read a
 * target's records: previews, the queue dashboard; every SCIM route, which the OpenAPI document
 * hides) against jobs, schedules and records of the target `default`. Each answer is refused
 * (403) or holds nothing of `default`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addImportSchedule } from '../../src/app/import-schedules.js';
import { securityOf } from '../../src/app/security.js';
import { runAs } from '../../src/auth/acting.js';
import type { Role } from '../../src/auth/roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';

const API_TOKEN = 'limits-api-token-0123456789';
let dir: string;
let other: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let limited: string;
/** What only the target `default` has: its jobs' ids, its schedules' names, its URL, a user. */
const marks: Record<string, string> = {};
/** Values for the path parameters of each route, naming `default`'s jobs and schedules. */
let params: Record<string, Record<string, string>>;

async function makeToken(name: string, role: Role, targets?: string[]): Promise<string> {
  const made = { at: new Date().toISOString(), actionId: name, who: { name: 'test' } };
  return (await securityOf(pipeline.context).tokens.create({ name, role, targets }, made)).token;
}

function call(
  token: string,
  method: string,
  path: string,
  body?: Blob | FormData,
): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
    body,
    redirect: 'manual',
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-limits-'));
  other = await startSandbox({ port: 0 });
  const targetsFile = join(dir, 'targets.json');
  // `default` comes from ADMIN_BASE_URL (the pipeline's sandbox); the file adds `other`
  await writeFile(targetsFile, JSON.stringify({ other: { url: other.url } }));
  pipeline = await startPipeline({
    env: { PORTER_TARGETS_FILE: targetsFile, PORTER_EXPORT_DIR: join(dir, 'exports') },
  });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  // an admin held to `other`: every role check passes, so the target limits are what refuse
  limited = await makeToken('other-admin', 'admin', ['other']);

  const admin = pipeline.context.createAdminClient();
  await admin.postUsers([{ username: 'only.on.default', email: 'only@default.example' }]);
  await admin.close();
  marks.url = pipeline.sandbox.url;
  marks.user = 'only.on.default';

  const started = await call(
    API_TOKEN,
    'POST',
    '/v1/imports?resource=users&mode=upsert&dryRun=true',
    new Blob([csv(['username', 'email'], [['planned.default', 'p@x']])], { type: 'text/csv' }),
  );
  marks.importId = ((await started.json()) as { id: string }).id;
  await pipeline.waitFinal(marks.importId);

  const exported = await fetch(`${baseUrl}/v1/exports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ resource: 'users', format: 'csv' }),
  });
  marks.exportId = ((await exported.json()) as { id: string }).id;
  await waitFor(
    async () => (await pipeline.context.exportStore.get(marks.exportId!))?.state === 'completed',
    { what: 'the export to complete' },
  );

  const migrated = await call(API_TOKEN, 'POST', '/v1/migrations?from=other&dryRun=true');
  marks.migrationId = ((await migrated.json()) as { id: string }).id;

  marks.schedule = 'nightly-of-default';
  const scheduled = await fetch(`${baseUrl}/v1/schedules`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: marks.schedule, cron: '0 2 1 1 *', resource: 'users' }),
  });
  expect(scheduled.status).toBe(201);

  marks.importSchedule = 'feed-of-default';
  const feed = join(dir, 'feed.csv');
  await writeFile(feed, csv(['username'], [['fed']]));
  await runAs({ principal: { name: 'cli:test', role: 'admin', via: 'cli' }, created: [] }, () =>
    addImportSchedule(pipeline.context, {
      name: marks.importSchedule!,
      cron: '0 3 1 1 *',
      request: {
        file: feed,
        options: {
          resource: 'users',
          mode: 'upsert',
          batchSize: 100,
          listSeparator: '|',
          emptyAsClear: false,
          allowAdmin: false,
        },
      },
    }),
  );

  params = {
    '/v1/imports/{id}': { id: marks.importId },
    '/v1/exports/{id}': { id: marks.exportId },
    '/v1/exports/{id}/files/{name}': { id: marks.exportId, name: 'manifest.json' },
    '/v1/migrations/{id}': { id: marks.migrationId },
    '/v1/schedules/{name}': { name: marks.schedule },
    '/v1/import-schedules/{name}': { name: marks.importSchedule },
    '/v1/targets/{name}': { name: 'default' },
    '/v1/notify/deliveries/{id}': { id: 'evt_any.ops' },
  };
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await other?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Routes anyone may call without a token, which a limited token gets no more of. */
const PUBLIC = new Set(['/healthz', '/readyz', '/docs/json']);

/** The path with its parameters filled in from the route family it belongs to. */
function concrete(path: string): string {
  const family = Object.keys(params)
    .filter((prefix) => path.startsWith(prefix))
    .sort((a, b) => b.length - a.length)[0];
  const values = family ? params[family]! : {};
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} of ${path}`);
    return encodeURIComponent(value);
  });
}

/** What in an answer belongs to `default`. */
function leaks(text: string): string[] {
  return Object.entries(marks)
    .filter(([, mark]) => text.includes(mark))
    .map(([what]) => what);
}

describe('a token limited to other targets', () => {
  it('reads nothing of another target on any route: every GET and HEAD of the API', async () => {
    const spec = (await (await call(API_TOKEN, 'GET', '/docs/json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const reads = Object.entries(spec.paths)
      .filter(([, operations]) => 'get' in operations)
      .map(([path]) => path)
      .filter((path) => !PUBLIC.has(path));
    expect(reads.length).toBeGreaterThan(15);
    const found: string[] = [];
    for (const path of reads) {
      const url = concrete(path);
      for (const method of ['GET', 'HEAD']) {
        const answer = await call(limited, method, url);
        const text = await answer.text();
        if (answer.status === 403) {
          expect(text, `${method} ${url}`).not.toMatch(/only\.on\.default/);
          continue;
        }
        const leaked = leaks(text);
        if (leaked.length > 0 || answer.status >= 500 || answer.status === 401) {
          found.push(`${method} ${url}: ${answer.status} ${leaked.join(', ')}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  it('is refused every SCIM route of another target, reads and writes, with a SCIM error body', async () => {
    const user = [...pipeline.sandbox.store.allUsers()].find((u) => u.username === marks.user)!;
    const id = String(user.userId);
    const scimRoutes: Array<[string, string]> = [
      ['GET', 'Users'],
      ['GET', `Users/${id}`],
      ['GET', `Users?filter=${encodeURIComponent(`userName eq "${marks.user}"`)}`],
      ['POST', 'Users'],
      ['PUT', `Users/${id}`],
      ['PATCH', `Users/${id}`],
      ['DELETE', `Users/${id}`],
      ['GET', 'Groups'],
      ['GET', 'Groups/1'],
      ['POST', 'Groups'],
      ['PUT', 'Groups/1'],
      ['PATCH', 'Groups/1'],
      ['DELETE', 'Groups/1'],
      ['POST', 'Bulk'],
      ['GET', 'ServiceProviderConfig'],
      ['GET', 'serviceConfiguration'],
      ['GET', 'ResourceTypes'],
      ['GET', 'ResourceTypes/User'],
      ['GET', 'Schemas'],
      ['GET', 'Schemas/urn:ietf:params:scim:schemas:core:2.0:User'],
    ];
    const found: string[] = [];
    for (const [method, path] of scimRoutes) {
      for (const spelt of [`/scim/v2/default/${path}`, `/scim/v2/default/${path.toLowerCase()}`]) {
        const answer = await fetch(`${baseUrl}${spelt}`, {
          method,
          headers: {
            authorization: `Bearer ${limited}`,
            ...(method === 'GET' || method === 'DELETE'
              ? {}
              : { 'content-type': 'application/scim+json' }),
          },
          body:
            method === 'GET' || method === 'DELETE'
              ? undefined
              : JSON.stringify({ userName: 'made.by.other', Operations: [] }),
        });
        const body = (await answer.json()) as { schemas?: string[]; code?: string };
        if (
          answer.status !== 403 ||
          body.code !== 'PORTER_FORBIDDEN' ||
          body.schemas?.[0] !== 'urn:ietf:params:scim:api:messages:2.0:Error'
        ) {
          found.push(`${method} ${spelt}: ${answer.status} ${JSON.stringify(body)}`);
        }
      }
    }
    expect(found).toEqual([]);
    expect(pipeline.sandbox.store.getUser(user.userId!)?.username).toBe(marks.user);
    expect([...pipeline.sandbox.store.allUsers()].map((u) => u.username)).not.toContain(
      'made.by.other',
    );
  });

  it('lists and checks its own targets only', async () => {
    const listed = await call(limited, 'GET', '/v1/targets');
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { name: string }[]).map((target) => target.name)).toEqual([
      'other',
    ]);
    expect((await call(limited, 'GET', '/v1/targets/default/check')).status).toBe(403);
    expect((await call(limited, 'GET', '/v1/targets/other/check')).status).toBe(200);
  });

  it("previews only on its targets: $unique does not read another target's names", async () => {
    const preview = (target: string): Promise<Response> => {
      const form = new FormData();
      form.set('resource', 'users');
      form.set('mode', 'upsert');
      form.set('target', target);
      form.set(
        'mapping',
        JSON.stringify({ fields: { username: '$unique([username, username & "2"])' } }),
      );
      form.set('file', new Blob([csv(['username'], [['only.on.default']])]), 'people.csv');
      return call(limited, 'POST', '/v1/previews', form);
    };
    const refused = await preview('default');
    expect(refused.status).toBe(403);
    expect(leaks(await refused.text())).toEqual([]);
    const own = await preview('other');
    expect(own.status, await own.clone().text()).toBe(200);
    // on `other` the name is free: nothing of `default` was read
    expect(await own.text()).not.toContain('only.on.default2');
  });

  it('is refused the queue dashboard and the audit trail, which show every target', async () => {
    for (const path of ['/queues', '/queues/', '/queues/api/queues', '/v1/audit']) {
      const answer = await call(limited, 'GET', path);
      expect(answer.status, path).toBe(403);
      expect(leaks(await answer.text()), path).toEqual([]);
    }
    const form = await fetch(`${baseUrl}/queues/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: limited }).toString(),
      redirect: 'manual',
    });
    expect(form.status).toBe(403);
    expect(form.headers.get('set-cookie')).toBeNull();
  });

  it("porter map test --target, given such a token, reads only the token's targets", async () => {
    const mapping = join(dir, 'unique.json');
    await writeFile(
      mapping,
      JSON.stringify({ fields: { username: '$unique([username, username & "2"])' } }),
    );
    const file = join(dir, 'people.csv');
    await writeFile(file, csv(['username'], [['only.on.default']]));
    const env = {
      ...pipeline.childEnv(),
      PORTER_TARGETS_FILE: join(dir, 'targets.json'),
      PORTER_TOKEN: limited,
    };
    const refused = await runPorter(
      ['map', 'test', file, '--map', mapping, '--target', 'default'],
      env,
    );
    expect(refused.code, refused.stderr).toBe(77);
    expect(refused.stderr).toContain('[PORTER_FORBIDDEN]');
    expect(refused.stdout).not.toContain('only.on.default2');
    const own = await runPorter(['map', 'test', file, '--map', mapping, '--target', 'other'], env);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).not.toContain('only.on.default2');
  });
});
