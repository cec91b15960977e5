/**
 * A target that is down: SCIM requests are answered 503 with Retry-After, never left hanging,
 * and nothing is half-applied (a create, a delete, a group PATCH).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

let dir: string;
let closed: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-scim-down-'));
  closed = await startSandbox({ port: 0 });
  await closed.close();
  const targetsFile = join(dir, 'targets.json');
  await writeFile(targetsFile, JSON.stringify({ down: { url: closed.url } }));
  pipeline = await startPipeline({ workers: false, env: { PORTER_TARGETS_FILE: targetsFile } });
  app = await buildApiApp({ context: pipeline.context, token: 'scim-down-api-token-0123456789' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const made = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  token = (
    await securityOf(pipeline.context).tokens.create(
      { name: 'okta', role: 'operator', targets: ['down'], scimOnly: true },
      made,
    )
  ).token;
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a target that is down', () => {
  it.each([
    ['GET', '/Users?filter=userName eq "a@x"', undefined],
    ['POST', '/Users', { userName: 'new.hire', active: true }],
    ['DELETE', '/Users/7', undefined],
    [
      'PATCH',
      '/Groups/3',
      { Operations: [{ op: 'add', path: 'members', value: [{ value: '7' }] }] },
    ],
  ])('%s %s is 503 with Retry-After, in bounded time', async (method, path, body) => {
    const response = await fetch(`${baseUrl}/scim/v2/down${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/scim+json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(20_000),
    });
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    const answer = (await response.json()) as { status: string; schemas: string[] };
    expect(answer.status).toBe('503');
    expect(answer.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
  });
});
