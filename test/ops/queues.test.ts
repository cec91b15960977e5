/**
 * The queue dashboard at /queues: closed without the token, open with `Authorization: Bearer`
 * or with the session cookie its sign-in form sets, read-only unless configured otherwise.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createPorterContext } from '../../src/app/context.js';
import { loadEnv } from '../../src/config/env.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const TOKEN = 'queues-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  app = await buildApiApp({ context: pipeline.context, token: TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

async function signIn(token: string): Promise<Response> {
  return fetch(`${baseUrl}/queues/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  });
}

describe('/queues', () => {
  it('answers 401 without the token, and 200 with it', async () => {
    for (const path of ['/queues', '/queues/', '/queues/api/queues']) {
      const refused = await fetch(`${baseUrl}${path}`);
      expect(refused.status, path).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { code: 'PORTER_UNAUTHORIZED' } });
      const wrong = await fetch(`${baseUrl}${path}`, { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status, path).toBe(401);
    }
    const page = await fetch(`${baseUrl}/queues`, { headers: auth });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<!DOCTYPE html>/i);
    const api = await fetch(`${baseUrl}/queues/api/queues`, { headers: auth });
    expect(api.status).toBe(200);
    const { queues } = (await api.json()) as { queues: { name: string; readOnlyMode: boolean }[] };
    expect(queues.map((queue) => queue.name).sort()).toEqual(['exports', 'import-batches']);
    expect(queues.every((queue) => queue.readOnlyMode)).toBe(true);
  });

  it('shows a browser the sign-in form, whose cookie then opens the dashboard', async () => {
    const browser = await fetch(`${baseUrl}/queues/`, { headers: { accept: 'text/html' } });
    expect(browser.status).toBe(401);
    expect(await browser.text()).toMatch(/<form method="post" action="\/queues\/login">/);

    const refused = await signIn('not-the-token');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();

    const signedIn = await signIn(TOKEN);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/queues/');
    const setCookie = signedIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\/queues/);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(';')[0]!;
    expect((await fetch(`${baseUrl}/queues/`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie } })).status).toBe(200);
    // the cookie opens the dashboard only, not the rest of the API
    expect((await fetch(`${baseUrl}/v1/imports`, { headers: { cookie } })).status).toBe(401);
    // a forged or altered cookie opens nothing
    const forged = cookie.replace(
      /=(.)/,
      (_match, first: string) => `=${first === 'A' ? 'B' : 'A'}`,
    );
    expect(forged).not.toBe(cookie);
    expect(
      (await fetch(`${baseUrl}/queues/api/queues`, { headers: { cookie: forged } })).status,
    ).toBe(401);
  });

  it('is read-only: a job cannot be removed or a queue emptied from it', async () => {
    const response = await fetch(`${baseUrl}/queues/api/queues/import-batches/empty`, {
      method: 'PUT',
      headers: auth,
    });
    expect(response.status).toBe(405);
  });

  it('answers a failure with a reference, never its message; the API log has the message', async () => {
    const lines: string[] = [];
    const log = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const prefix = freshPrefix('queues-failure');
    const env = loadEnv({ REDIS_URL: testRedisUrl(), PORTER_PREFIX: prefix });
    const context = await createPorterContext(env, { logger: pino({ level: 'error' }, log) });
    const failing = await buildApiApp({ context, token: TOKEN });
    try {
      // a waiting job whose data is not JSON: bull-board's read of the queue throws on it
      const queueKey = `${prefix}:{import-batches}:import-batches`;
      await context.redis.hset(`${queueKey}:broken`, {
        name: 'batch',
        data: '{not json',
        opts: '{}',
        timestamp: String(Date.now()),
      });
      await context.redis.lpush(`${queueKey}:wait`, 'broken');
      const answer = await failing.inject({
        method: 'GET',
        url: '/queues/api/queues?activeQueue=import-batches&status=waiting&page=1',
        headers: auth,
      });
      expect(answer.statusCode).toBe(500);
      const body = answer.json<{ message: string; reference: string }>();
      expect(answer.body).not.toMatch(/JSON|not json|position|at .*\.js/);
      expect(body.message).toContain(body.reference);
      const logged = lines.find((line) => line.includes(body.reference));
      expect(logged).toMatch(/JSON/);
    } finally {
      await failing.close();
      await context.close().catch(() => {});
      await deletePrefix(testRedisUrl(), prefix);
    }
  });
});
