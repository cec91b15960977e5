/**
 * A `--scim-only` token, an admin limited to no target (the widest it can be), walks every route
 * of the API other than SCIM's: every operation the OpenAPI document lists, in each method, the
 * queue dashboard with its sign-in form, /metrics and the notification routes. Each is refused
 * (403 naming SCIM), no session cookie is handed out, and the token still opens SCIM.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { listedRoutes } from '../../src/auth/route-roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const API_TOKEN = 'scim-only-walk-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let scimOnly: string;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false, env: { PORTER_METRICS_AUTH: 'token' } });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const made = { at: new Date().toISOString(), actionId: 'walk', who: { name: 'test' } };
  scimOnly = (
    await securityOf(pipeline.context).tokens.create(
      { name: 'idp-everywhere', role: 'admin', scimOnly: true },
      made,
    )
  ).token;
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

/** Routes anyone may call without a token, which a SCIM-only token gets no more of. */
const PUBLIC = new Set(['/healthz', '/readyz', '/docs/json']);

function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => `walk-${name}`);
}

describe('a --scim-only token', () => {
  it('is refused every other route of the API, in every method', async () => {
    const spec = (await (
      await fetch(`${baseUrl}/docs/json`, { headers: { authorization: `Bearer ${API_TOKEN}` } })
    ).json()) as { paths: Record<string, Record<string, unknown>> };
    const calls = new Set<string>();
    for (const [path, operations] of Object.entries(spec.paths)) {
      if (PUBLIC.has(path)) continue;
      for (const method of Object.keys(operations)) {
        calls.add(`${method.toUpperCase()} ${concrete(path)}`);
        if (method === 'get') calls.add(`HEAD ${concrete(path)}`);
      }
    }
    // the state-changing routes of the table of roles, the hidden ones among them
    for (const [route] of listedRoutes()) {
      if (!route.includes(' /scim/')) calls.add(concrete(route.replace(/:(\w+)/g, '{$1}')));
    }
    for (const extra of [
      'GET /queues',
      'GET /queues/',
      'GET /queues/api/queues',
      'PUT /queues/api/queues/pause',
      'GET /metrics',
      'GET /v1/notify/channels',
      'GET /v1/notify/deliveries',
      'POST /v1/notify/channels/ops/test',
      'GET /v1/session',
      'GET /no/such/route',
    ]) {
      calls.add(extra);
    }
    expect(calls.size).toBeGreaterThan(40);
    const found: string[] = [];
    for (const call of calls) {
      const [method, path] = call.split(' ') as [string, string];
      const answer = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${scimOnly}` },
        redirect: 'manual',
      });
      const text = await answer.text();
      const named = method === 'HEAD' || text.includes('SCIM routes');
      if (answer.status !== 403 || !named)
        found.push(`${call}: ${answer.status} ${text.slice(0, 120)}`);
    }
    expect(found).toEqual([]);
  });

  it("gets no session from the queue dashboard's sign-in form", async () => {
    const form = await fetch(`${baseUrl}/queues/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: scimOnly }).toString(),
      redirect: 'manual',
    });
    expect(form.status).toBe(403);
    expect(form.headers.get('set-cookie')).toBeNull();
    expect(await form.text()).toContain('SCIM routes');
  });

  it('still opens the SCIM routes', async () => {
    const answer = await fetch(`${baseUrl}/scim/v2/default/Users?count=1`, {
      headers: { authorization: `Bearer ${scimOnly}` },
    });
    expect(answer.status).toBe(200);
  });
});
