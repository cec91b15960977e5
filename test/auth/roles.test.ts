/**
 * Roles through the HTTP API: every state-changing route against every role (a refused one is
 * 403 naming the role it needs, and nothing changes), target limits, four eyes on a held sync,
 * what each import records of who started it, and no token kept in clear in Redis.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { ROLES, roleIncludes, type Role } from '../../src/auth/roles.js';
import { listedRoutes, routeRule } from '../../src/auth/route-roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import { seedUsers, startSyncPipeline } from '../sync/sync-fixture.js';

const API_TOKEN = 'roles-api-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
const tokens: Record<string, string> = {};

async function createToken(name: string, role: Role, targets?: string[]): Promise<string> {
  const created = await securityOf(pipeline.context).tokens.create(
    { name, role, targets },
    { at: new Date().toISOString(), actionId: name, who: { name: 'test' } },
  );
  return created.token;
}

beforeAll(async () => {
  pipeline = await startSyncPipeline();
  await seedUsers(
    pipeline,
    Array.from({ length: 6 }, (_, index) => ({ username: `staff${index}`, email: `s${index}@x` })),
  );
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  for (const role of ROLES) tokens[role] = await createToken(`the-${role}`, role);
  tokens.secondApprover = await createToken('second-approver', 'approver');
  tokens.elsewhere = await createToken('elsewhere-operator', 'operator', ['elsewhere']);
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

function call(
  token: string,
  method: string,
  path: string,
  body?: string,
  contentType = 'text/csv',
): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': contentType } : {}),
    },
    body,
  });
}

const upload = csv(['username', 'email'], [['new.person', 'new@x']]);
const MISSING = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** A request for each state-changing route; ids name nothing, so an allowed one reaches its handler. */
const REQUESTS: Record<string, { path: string; body?: string; type?: string }> = {
  'POST /v1/imports': { path: '/v1/imports?resource=users&mode=upsert&dryRun=true', body: upload },
  'POST /v1/source-imports': { path: '/v1/source-imports', body: '{}', type: 'application/json' },
  'DELETE /v1/imports/:id': { path: `/v1/imports/${MISSING}` },
  'POST /v1/imports/:id/resume': { path: `/v1/imports/${MISSING}/resume` },
  'POST /v1/imports/:id/retry': { path: `/v1/imports/${MISSING}/retry` },
  'POST /v1/imports/:id/undo': { path: `/v1/imports/${MISSING}/undo` },
  'POST /v1/imports/:id/apply': { path: `/v1/imports/${MISSING}/apply` },
  'POST /v1/imports/:id/approve': { path: `/v1/imports/${MISSING}/approve` },
  'POST /v1/exports': { path: '/v1/exports', body: '{}', type: 'application/json' },
  'POST /v1/migrations': { path: '/v1/migrations', body: '{}', type: 'application/json' },
  'POST /v1/previews': { path: '/v1/previews', body: upload },
  'POST /v1/schedules': { path: '/v1/schedules', body: '{}', type: 'application/json' },
  'DELETE /v1/schedules/:name': { path: '/v1/schedules/no-such-schedule' },
  'DELETE /v1/import-schedules/:name': { path: '/v1/import-schedules/no-such-schedule' },
  'GET /v1/audit': { path: '/v1/audit' },
  'POST /v1/notify/channels/:name/test': { path: '/v1/notify/channels/no-such-channel/test' },
  'GET /v1/notify/deliveries': { path: '/v1/notify/deliveries' },
  'GET /v1/notify/deliveries/:id': { path: '/v1/notify/deliveries/no-such-delivery' },
  'POST /v1/notify/deliveries/:id/redeliver': {
    path: '/v1/notify/deliveries/no-such-delivery/redeliver',
  },
  'POST /v1/session/logout': { path: '/v1/session/logout' },
  'POST /queues/logout': { path: '/queues/logout' },
  'POST /scim/v2/:target/Users': {
    path: '/scim/v2/default/Users',
    body: '{}',
    type: 'application/scim+json',
  },
  'PUT /scim/v2/:target/Users/:id': {
    path: '/scim/v2/default/Users/999999',
    body: '{}',
    type: 'application/scim+json',
  },
  'PATCH /scim/v2/:target/Users/:id': {
    path: '/scim/v2/default/Users/999999',
    body: '{}',
    type: 'application/scim+json',
  },
  'DELETE /scim/v2/:target/Users/:id': { path: '/scim/v2/default/Users/999999' },
  'POST /scim/v2/:target/Groups': {
    path: '/scim/v2/default/Groups',
    body: '{}',
    type: 'application/scim+json',
  },
  'PUT /scim/v2/:target/Groups/:id': {
    path: '/scim/v2/default/Groups/999999',
    body: '{}',
    type: 'application/scim+json',
  },
  'PATCH /scim/v2/:target/Groups/:id': {
    path: '/scim/v2/default/Groups/999999',
    body: '{}',
    type: 'application/scim+json',
  },
  'DELETE /scim/v2/:target/Groups/:id': { path: '/scim/v2/default/Groups/999999' },
  'POST /scim/v2/:target/Bulk': {
    path: '/scim/v2/default/Bulk',
    body: '{}',
    type: 'application/scim+json',
  },
};

describe('roles', () => {
  it('every state-changing route of the API is in the table of roles', async () => {
    const spec = (await (await call(API_TOKEN, 'GET', '/docs/json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const unlisted: string[] = [];
    for (const [path, operations] of Object.entries(spec.paths)) {
      const url = path.replace(/\{(\w+)\}/g, ':$1');
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        if (method === 'GET' || method === 'HEAD') continue;
        if (routeRule(method, url).action === 'unlisted') unlisted.push(`${method} ${url}`);
      }
    }
    expect(unlisted).toEqual([]);
    expect(Object.keys(REQUESTS).sort()).toEqual(
      listedRoutes()
        .map(([route]) => route)
        .sort(),
    );
  });

  for (const [route, rule] of listedRoutes()) {
    for (const role of ROLES) {
      const allowed = roleIncludes(role, rule.role);
      it(`${route} as ${role}: ${allowed ? 'allowed' : `403 naming ${rule.role}`}`, async () => {
        const request = REQUESTS[route]!;
        const method = route.split(' ')[0]!;
        const before = await pipeline.context.store.list({ limit: 1000 });
        const response = await call(
          tokens[role]!,
          method,
          request.path,
          request.body,
          request.type,
        );
        if (allowed) {
          expect([401, 403]).not.toContain(response.status);
          return;
        }
        expect(response.status).toBe(403);
        const answer = (await response.json()) as Record<string, unknown>;
        // a SCIM route answers a SCIM error body, porter's code and message in it
        const body = (
          route.includes(' /scim/')
            ? {
                error: {
                  code: answer.code,
                  message: answer.detail,
                  details: { needed: rule.role, role },
                },
              }
            : answer
        ) as { error: { code: string; message: string; details: unknown } };
        expect(body.error.code).toBe('PORTER_FORBIDDEN');
        expect(body.error.message).toContain(`needs the ${rule.role} role`);
        expect(body.error.details).toMatchObject({ needed: rule.role, role });
        // nothing changed
        expect((await pipeline.context.store.list({ limit: 1000 })).length).toBe(before.length);
      });
    }
  }

  it('HEAD needs what GET needs: HEAD /v1/audit is refused to a viewer', async () => {
    const refused = await call(tokens.viewer!, 'HEAD', '/v1/audit');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-length')).not.toBe(
      (await call(tokens.admin!, 'HEAD', '/v1/audit')).headers.get('content-length'),
    );
    expect((await call(tokens.admin!, 'HEAD', '/v1/audit')).status).toBe(200);
    for (const [route, rule] of listedRoutes()) {
      if (route.startsWith('GET ')) expect(routeRule('HEAD', route.slice(4))).toEqual(rule);
    }
  });

  it('an import records the principal that started it', async () => {
    const response = await call(
      tokens.operator!,
      'POST',
      '/v1/imports?resource=users&mode=upsert&dryRun=true',
      upload,
    );
    expect(response.status).toBe(202);
    const { id, startedBy } = (await response.json()) as { id: string; startedBy: string };
    expect(startedBy).toBe('token:the-operator');
    expect((await pipeline.context.store.get(id))?.startedBy).toBe('token:the-operator');
  });

  it('a token limited to other targets is refused on this target, for new jobs and existing ones', async () => {
    const refused = await call(
      tokens.elsewhere!,
      'POST',
      '/v1/imports?resource=users&mode=upsert',
      upload,
    );
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'PORTER_FORBIDDEN',
    );
    const started = await call(
      tokens.operator!,
      'POST',
      '/v1/imports?resource=users&mode=upsert&dryRun=true',
      upload,
    );
    const { id } = (await started.json()) as { id: string };
    for (const [method, path] of [
      ['GET', `/v1/imports/${id}`],
      ['DELETE', `/v1/imports/${id}`],
    ] as const) {
      const response = await call(tokens.elsewhere!, method, path);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
        'limited to target elsewhere',
      );
    }
  });

  it('four eyes: a held sync is not approved by the principal that started it', async () => {
    const file = csv(['username', 'email'], [['staff0', 's0@x']]);
    const started = await call(
      tokens.approver!,
      'POST',
      '/v1/imports?resource=users&mode=sync',
      file,
    );
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    const held = await pipeline.waitFinal(id);
    expect(held.state).toBe('held');

    const self = await call(tokens.approver!, 'POST', `/v1/imports/${id}/approve`);
    expect(self.status).toBe(403);
    expect(((await self.json()) as { error: { code: string } }).error.code).toBe(
      'PORTER_APPROVAL_SELF',
    );
    expect((await pipeline.context.store.get(id))?.state).toBe('held');

    const other = await call(tokens.secondApprover!, 'POST', `/v1/imports/${id}/approve`);
    expect(other.status).toBe(202);
    const after = await pipeline.context.store.get(id);
    expect(after?.approval).toMatchObject({
      by: 'token:second-approver',
      counts: held.counts,
      actions: held.actions,
    });
    expect(Date.parse(after!.approval!.at)).toBeGreaterThan(0);
    const application = (await other.json()) as { id: string; startedBy: string };
    expect(application.startedBy).toBe('token:second-approver');
    await pipeline.waitFinal(application.id);
  });

  it('PORTER_API_TOKEN is an admin; an unknown or revoked token is refused', async () => {
    expect((await call(API_TOKEN, 'GET', '/v1/audit')).status).toBe(200);
    const token = await createToken('short-lived', 'viewer');
    expect((await call(token, 'GET', '/v1/imports')).status).toBe(200);
    await securityOf(pipeline.context).tokens.revoke('short-lived', {
      at: new Date().toISOString(),
      actionId: 'x',
      who: { name: 'test' },
    });
    expect((await call(token, 'GET', '/v1/imports')).status).toBe(401);
  });

  it('no token is kept in clear in Redis', async () => {
    const redis = pipeline.context.redis;
    const keys = await redis.keys(`${pipeline.context.env.PORTER_PREFIX}:*`);
    const dumps: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') dumps.push((await redis.get(key)) ?? '');
      else if (type === 'hash') dumps.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') dumps.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'stream') dumps.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      else if (type === 'zset') dumps.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
      else if (type === 'set') dumps.push(JSON.stringify(await redis.smembers(key)));
    }
    const all = dumps.join('\n');
    expect(all).toContain('the-viewer');
    for (const token of [...Object.values(tokens), API_TOKEN]) {
      expect(all).not.toContain(token);
      // the secret is everything after `porter_<id>_`, and may itself hold `_`
      expect(all).not.toContain(/^porter_[0-9a-f]{16}_(.+)$/.exec(token)?.[1] ?? token);
    }
  });
});
