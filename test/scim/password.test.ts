/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/**
 * A password an identity provider sends (Okta's "sync password") is never sent back, never
 * kept and never told by a filter: not in the 201 or 200 answers, not in a read, not found by
 * `password sw "…"` one character at a time, and nowhere in Redis. Real HTTP, the sandbox.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { scimRequest, type ScimAnswer } from '../helpers/scim-request.js';

const API_TOKEN = 'password-scim-token-0123456789';
const SECRET = 'Okta-Sync-Pw-7319';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;

const scim = (method: string, path: string, body?: unknown): Promise<ScimAnswer> =>
  scimRequest(`${baseUrl}/scim/v2/default${path}`, API_TOKEN, method, body);

/** Every value under the pipeline's Redis prefix, as text. */
async function everythingInRedis(): Promise<string> {
  const { redis, env } = pipeline.context;
  const texts: string[] = [];
  for (const key of await redis.keys(`${env.PORTER_PREFIX}*`)) {
    const type = await redis.type(key);
    if (type === 'string') texts.push(String(await redis.get(key)));
    else if (type === 'hash') texts.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'list') texts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') texts.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'zset') texts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
    else if (type === 'stream') texts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return texts.join('\n');
}

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

describe('a SCIM password', () => {
  it('is not in the answers to a create, a replace, a read or a list', async () => {
    const created = await scim('POST', '/Users', { userName: 'okta.user', password: SECRET });
    expect(created.status).toBe(201);
    expect(created.text).not.toContain(SECRET);
    const id = (JSON.parse(created.text) as any).id as string;
    const replaced = await scim('PUT', `/Users/${id}`, {
      userName: 'okta.user',
      password: `${SECRET}2`,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.text).not.toContain(SECRET);
    for (const path of [`/Users/${id}`, '/Users', `/Users?attributes=password`]) {
      const read = await scim('GET', path);
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(SECRET);
    }
  });

  it('cannot be filtered on: no answer tells its first characters', async () => {
    for (const filter of ['password sw "O"', 'password pr', 'userName pr and password co "Sync"']) {
      const answer = await scim('GET', `/Users?filter=${encodeURIComponent(filter)}`);
      expect(answer.status).toBe(400);
      expect((JSON.parse(answer.text) as any).scimType).toBe('invalidFilter');
    }
  });

  it('is kept nowhere in Redis', async () => {
    expect(await everythingInRedis()).not.toContain(SECRET);
  });
});
