/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/**
 * A target whose calls are paused (a 429 of the DAM made every worker wait out its Retry-After):
 * SCIM requests are answered 429 with the time left as Retry-After and a SCIM error body, at
 * once, and send nothing to the DAM; once the pause is over they are applied.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let token: string;

async function scim(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${baseUrl}/scim/v2/default${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    // a request that waited out the pause would outlive this
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    headers: response.headers,
  };
}

function gate() {
  return pipeline.context.gateOf(pipeline.context.targets.require('default'));
}

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  app = await buildApiApp({ context: pipeline.context, token: 'scim-paused-api-token-0123456789' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const made = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  token = (
    await securityOf(pipeline.context).tokens.create(
      { name: 'entra', role: 'operator', targets: ['default'], scimOnly: true },
      made,
    )
  ).token;
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

describe('a target whose calls are paused', () => {
  it('answers every SCIM request 429 with Retry-After at once, sends nothing, then applies it after', async () => {
    const existing = await scim('POST', '/Users', { userName: 'kept.user', active: true });
    expect(existing.status).toBe(201);
    const id = String(existing.body.id);
    const group = await scim('POST', '/Groups', { displayName: 'Paused Team' });
    expect(group.status).toBe(201);

    await gate().pauseAll(120_000);
    const sandbox = pipeline.sandbox.store;
    sandbox.resetStats();
    const requests: [string, string, unknown][] = [
      ['POST', '/Users', { userName: 'new.hire', active: true }],
      ['PATCH', `/Users/${id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] }],
      ['PUT', `/Users/${id}`, { userName: 'kept.user', title: 'Renamed' }],
      ['DELETE', `/Users/${id}`, undefined],
      [
        'PATCH',
        `/Groups/${group.body.id}`,
        { Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] },
      ],
      [
        'POST',
        '/Bulk',
        {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
          Operations: [
            { method: 'POST', path: '/Users', bulkId: 'a', data: { userName: 'bulk.hire' } },
          ],
        },
      ],
      ['GET', '/Users?filter=userName eq "kept.user"', undefined],
    ];
    for (const [method, path, body] of requests) {
      const answer = await scim(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(429);
      const retryAfter = Number(answer.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(60);
      expect(retryAfter).toBeLessThanOrEqual(120);
      expect(answer.body).toMatchObject({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '429',
        code: 'PORTER_SCIM_TARGET_PAUSED',
      });
    }
    // nothing reached the DAM: not half-applied, not applied at all
    expect(sandbox.stats.requests).toEqual({ GET: 0, PUT: 0, POST: 0, DELETE: 0 });
    expect(sandbox.userByName('new.hire')).toBeUndefined();
    expect(sandbox.user(Number(id))?.status).toBe('Active');
    // discovery does not call the DAM: answered as ever
    expect((await scim('GET', '/ServiceProviderConfig')).status).toBe(200);

    // the pause ends: the provider's retry is applied
    await pipeline.context.redis.del(
      ...(await pipeline.context.redis.keys(
        `${pipeline.context.env.PORTER_PREFIX}:admin-gate:*:paused`,
      )),
    );
    expect((await scim('POST', '/Users', { userName: 'new.hire', active: true })).status).toBe(201);
    expect(sandbox.userByName('new.hire')).toBeDefined();
  });
});
