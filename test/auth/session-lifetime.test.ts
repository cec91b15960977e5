/**
 * A queue dashboard session lives no longer than the token that opened it: from the request after
 * `porter tokens revoke`, or past the token's expiry, its cookie opens nothing, its pause and
 * resume buttons (PORTER_QUEUES_READ_ONLY=false) included; a session of PORTER_API_TOKEN ends
 * when the API's token is another.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { Role } from '../../src/auth/roles.js';
import { securityKey } from '../../src/redis/key-tags.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { runPorter } from '../helpers/porter-cli.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const API_TOKEN = 'lifetime-api-token-0123456789';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false, env: { PORTER_QUEUES_READ_ONLY: 'false' } });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

async function makeToken(name: string, role: Role): Promise<string> {
  const made = { at: new Date().toISOString(), actionId: name, who: { name: 'test' } };
  return (await securityOf(pipeline.context).tokens.create({ name, role }, made)).token;
}

/** The dashboard's cookie, from its sign-in form. */
async function boardCookie(token: string, on = baseUrl): Promise<string> {
  const signedIn = await fetch(`${on}/queues/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  });
  expect(signedIn.status).toBe(303);
  return (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
}

function pause(cookie: string, action: 'pause' | 'resume', on = baseUrl): Promise<Response> {
  return fetch(`${on}/queues/api/queues/import-batches/${action}`, {
    method: 'PUT',
    headers: { cookie, origin: on },
  });
}

describe('a dashboard session ends with its token', () => {
  it('porter tokens revoke: the next request with its cookie is refused, buttons included', async () => {
    const token = await makeToken('board-admin', 'admin');
    const cookie = await boardCookie(token);
    expect((await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(200);
    expect((await pause(cookie, 'pause')).status).toBe(200);
    expect(await pipeline.context.importQueue.isPaused()).toBe(true);

    const revoked = await runPorter(['tokens', 'revoke', 'board-admin'], pipeline.childEnv());
    expect(revoked.code, revoked.stderr).toBe(0);

    expect((await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(401);
    expect((await pause(cookie, 'resume')).status).toBe(401);
    expect(await pipeline.context.importQueue.isPaused()).toBe(true);
    // nothing more was done in the revoked token's name than the pause before
    const done = await securityOf(pipeline.context).audit.read({
      action: 'queues.change',
      who: 'token:board-admin',
    });
    expect(done.map((event) => event.phase).sort()).toEqual(['intent', 'result']);
    await pipeline.context.importQueue.resume();
  });

  it("past the token's expiry, its session opens nothing", async () => {
    const token = await makeToken('board-viewer', 'viewer');
    const cookie = await boardCookie(token);
    expect((await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(200);
    // the token's time runs out (as `--expires` sets it, a moment ago)
    const { redis, env } = pipeline.context;
    const key = securityKey(env.PORTER_PREFIX, 'tokens');
    const id = /^porter_([0-9a-f]{16})_/.exec(token)![1]!;
    const stored = JSON.parse((await redis.hget(key, id))!) as Record<string, unknown>;
    await redis.hset(
      key,
      id,
      JSON.stringify({ ...stored, expiresAt: new Date(Date.now() - 1000).toISOString() }),
    );

    expect((await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(401);
    expect(
      (
        await fetch(`${baseUrl}/queues/api/queues`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).status,
    ).toBe(401);
  });

  it('a session of PORTER_API_TOKEN ends where the API has another token', async () => {
    const cookie = await boardCookie(API_TOKEN);
    expect((await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(200);
    // the same Redis, an API whose token was changed
    const rotated = await buildApiApp({
      context: pipeline.context,
      token: 'lifetime-rotated-token-0123456789',
    });
    try {
      const rotatedUrl = await rotated.listen({ port: 0, host: '127.0.0.1' });
      expect((await fetch(`${rotatedUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(
        401,
      );
    } finally {
      await rotated.close();
    }
  });
});
