/**
 * The API behind a TLS proxy. With PORTER_TRUST_PROXY naming the proxy, X-Forwarded-For gives
 * the client's address (the failure limit counts each client apart) and X-Forwarded-Proto and
 * -Host the browser's origin (cookies are Secure, a session's changes pass the origin check).
 * Without it, those headers count for nothing: a client cannot name its own address. Failures
 * are counted per stored token presented too, from whatever address.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const API_TOKEN = 'proxy-api-token-0123456789';
const PUBLIC = { origin: 'https://porter.example.com', host: 'porter.example.com' };

interface Api {
  pipeline: Pipeline;
  app: FastifyInstance;
  url: string;
}

let trusting: Api;
let plain: Api;

async function startApi(env: Record<string, string>): Promise<Api> {
  const pipeline = await startPipeline({
    workers: false,
    env: { PORTER_AUTH_FAILURES_PER_MINUTE: '3', ...env },
  });
  const app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  return { pipeline, app, url: await app.listen({ port: 0, host: '127.0.0.1' }) };
}

beforeAll(async () => {
  trusting = await startApi({ PORTER_TRUST_PROXY: 'loopback' });
  plain = await startApi({});
});
afterAll(async () => {
  for (const api of [trusting, plain]) {
    await api?.app.close();
    await api?.pipeline.close();
  }
});

/** A request as the proxy forwards it for a client at `client`, over https. */
function forwarded(client: string): Record<string, string> {
  return {
    'x-forwarded-for': client,
    'x-forwarded-proto': 'https',
    'x-forwarded-host': PUBLIC.host,
  };
}

function signInToBoard(api: Api, headers: Record<string, string>): Promise<Response> {
  return fetch(`${api.url}/queues/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token: API_TOKEN }).toString(),
    redirect: 'manual',
  });
}

function read(api: Api, token: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${api.url}/v1/imports`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
}

describe('behind a proxy PORTER_TRUST_PROXY names', () => {
  it('the session cookie is Secure, and a change through it passes the origin check', async () => {
    const signedIn = await signInToBoard(trusting, forwarded('198.51.100.1'));
    expect(signedIn.status).toBe(303);
    const setCookie = signedIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/; Secure/);
    const cookie = setCookie.split(';')[0]!;
    const out = await fetch(`${trusting.url}/queues/logout`, {
      method: 'POST',
      headers: { cookie, origin: PUBLIC.origin, ...forwarded('198.51.100.1') },
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
  });

  it("a client's failures lock that client out, not everyone behind the proxy", async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await read(trusting, 'wrong-token', forwarded('198.51.100.7'))).status).toBe(401);
    }
    expect((await read(trusting, API_TOKEN, forwarded('198.51.100.7'))).status).toBe(429);
    expect((await read(trusting, API_TOKEN, forwarded('198.51.100.8'))).status).toBe(200);
    const [refused] = await securityOf(trusting.pipeline.context).audit.read({
      action: 'token.refused',
    });
    expect(refused?.from?.address).toBe('198.51.100.7');
  });

  it('failures presenting one stored token count for that token, from any address', async () => {
    const made = { at: new Date().toISOString(), actionId: 'made', who: { name: 'test' } };
    const { token } = await securityOf(trusting.pipeline.context).tokens.create(
      { name: 'guessed', role: 'viewer' },
      made,
    );
    // its id, another secret
    const guess = `${token.slice(0, 'porter_'.length + 16)}_${'A'.repeat(43)}`;
    expect(guess).not.toBe(token);
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await read(trusting, guess, forwarded(`203.0.113.${attempt + 1}`));
      expect(answer.status).toBe(401);
    }
    // each address failed once: they are not held back, the token guessed at is
    expect((await read(trusting, API_TOKEN, forwarded('203.0.113.1'))).status).toBe(200);
    expect((await read(trusting, guess, forwarded('203.0.113.50'))).status).toBe(429);
  });
});

describe('without PORTER_TRUST_PROXY', () => {
  it('X-Forwarded-* count for nothing: no Secure cookie, and no escaping the limit by naming an address', async () => {
    const signedIn = await signInToBoard(plain, forwarded('198.51.100.1'));
    expect(signedIn.headers.get('set-cookie') ?? '').not.toMatch(/Secure/);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(
        (await read(plain, 'wrong-token', forwarded(`198.51.100.${attempt + 20}`))).status,
      ).toBe(401);
    }
    expect((await read(plain, API_TOKEN, forwarded('198.51.100.99'))).status).toBe(429);
  });
});
