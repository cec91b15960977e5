/**
 * The admin client as every porter process builds it: settings loaded from the environment
 * (loadEnv), turned into client options (the target `default`, which the context uses),
 * talking to a sandbox that requires each way of authenticating.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import type { AdminClientOptions } from '../../src/admin/client.js';
import type { Env } from '../../src/config/env.js';
import { loadTargets } from '../../src/targets/targets.js';

/** The client options of the target `default`, which the ADMIN_* variables make. */
function adminClientOptionsFromEnv(env: Env): AdminClientOptions {
  return loadTargets(env, {}).require('default').client!;
}
import { AdminNoAnswerError, classifyFailure } from '../../src/admin/errors.js';
import { loadEnv } from '../../src/config/env.js';
import { isPorterError } from '../../src/errors/porter-error.js';
import { createSandbox } from '../../src/sandbox/app.js';
import type { SandboxOptions } from '../../src/sandbox/options.js';
import { adminFailure } from '../helpers/sandbox.js';

/** What reached the sandbox: headers, query and form field names of each admin request. */
interface Seen {
  method: string;
  headers: Record<string, unknown>;
  query: Record<string, unknown>;
  formFields: string[];
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A listening sandbox that records every request it serves. */
async function recordingSandbox(options: SandboxOptions): Promise<{ url: string; seen: Seen[] }> {
  const { app } = await createSandbox(options);
  const seen: Seen[] = [];
  // preValidation runs after the body is parsed and before the handler checks credentials
  app.addHook('preValidation', async (request) => {
    seen.push({
      method: request.method,
      headers: { ...request.headers },
      query: { ...(request.query as Record<string, unknown>) },
      formFields:
        request.body instanceof Map ? [...(request.body as Map<string, string>).keys()] : [],
    });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => app.close());
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, seen };
}

/** The client a porter process builds from these environment variables. */
function clientFromEnv(variables: Record<string, string>): AdminClient {
  const client = new AdminClient(adminClientOptionsFromEnv(loadEnv(variables)));
  closers.push(() => client.close());
  return client;
}

describe('admin client settings from the environment', () => {
  it('ADMIN_API_KEY travels as the apikey header; ADMIN_EXTRA_HEADERS go with every request', async () => {
    const { url, seen } = await recordingSandbox({ apiKey: 'env-key-1' });
    const client = clientFromEnv({
      ADMIN_BASE_URL: url,
      ADMIN_API_KEY: 'env-key-1',
      ADMIN_EXTRA_HEADERS: '{"x-tenant":"acme","x-trace":"t-1"}',
    });
    expect(await client.postUsers([{ username: 'ada' }])).toMatchObject([{ userId: 1 }]);
    expect(await client.listUsers()).toHaveLength(1);
    expect(seen).toHaveLength(2);
    for (const request of seen) {
      expect(request.headers).toMatchObject({
        apikey: 'env-key-1',
        'x-tenant': 'acme',
        'x-trace': 't-1',
      });
      expect(request.headers.authorization).toBeUndefined();
    }
    const wrong = clientFromEnv({ ADMIN_BASE_URL: url, ADMIN_API_KEY: 'env-key-2' });
    expect(await adminFailure(() => wrong.listUsers())).toMatchObject({
      status: 401,
      errorcode: 'UNAUTHORIZED',
    });
    const none = clientFromEnv({ ADMIN_BASE_URL: url });
    expect(await adminFailure(() => none.listUsers())).toMatchObject({ status: 401 });
  });

  it('ADMIN_USER and ADMIN_PASSWORD travel as HTTP Basic by default (ADMIN_AUTH_MODE=basic)', async () => {
    const { url, seen } = await recordingSandbox({ user: 'admin', password: 'pa:ss wörd' });
    const client = clientFromEnv({
      ADMIN_BASE_URL: url,
      ADMIN_USER: 'admin',
      ADMIN_PASSWORD: 'pa:ss wörd',
    });
    expect(await client.postGroups([{ name: 'Editors' }])).toMatchObject([{ id: 1 }]);
    expect(await client.listGroups()).toHaveLength(1);
    const basic = `Basic ${Buffer.from('admin:pa:ss wörd').toString('base64')}`;
    for (const request of seen) {
      expect(request.headers.authorization).toBe(basic);
      expect(request.query).not.toHaveProperty('pass');
      expect(request.formFields).not.toContain('pass');
    }
    const explicit = clientFromEnv({
      ADMIN_BASE_URL: url,
      ADMIN_USER: 'admin',
      ADMIN_PASSWORD: 'pa:ss wörd',
      ADMIN_AUTH_MODE: 'basic',
    });
    expect(await explicit.listGroups()).toHaveLength(1);
    const wrong = clientFromEnv({ ADMIN_BASE_URL: url, ADMIN_USER: 'admin', ADMIN_PASSWORD: 'x' });
    expect(await adminFailure(() => wrong.listGroups())).toMatchObject({ status: 401 });
  });

  it('ADMIN_AUTH_MODE=params sends user/pass as query parameters (GET) and form fields (writes)', async () => {
    const { url, seen } = await recordingSandbox({ user: 'admin', password: 's3cret' });
    const client = clientFromEnv({
      ADMIN_BASE_URL: url,
      ADMIN_USER: 'admin',
      ADMIN_PASSWORD: 's3cret',
      ADMIN_AUTH_MODE: 'params',
    });
    expect(await client.listUsers()).toEqual([]);
    expect(await client.postUsers([{ username: 'ada' }])).toMatchObject([{ userId: 1 }]);
    expect(seen.map((request) => request.method)).toEqual(['GET', 'POST']);
    for (const request of seen) expect(request.headers.authorization).toBeUndefined();
    expect(seen[0]?.query).toMatchObject({ user: 'admin', pass: 's3cret' });
    expect(seen[1]?.formFields).toEqual(['users', 'user', 'pass']);
    const wrong = clientFromEnv({
      ADMIN_BASE_URL: url,
      ADMIN_USER: 'admin',
      ADMIN_PASSWORD: 'wrong',
      ADMIN_AUTH_MODE: 'params',
    });
    expect(await adminFailure(() => wrong.postUsers([{ username: 'x' }]))).toMatchObject({
      status: 401,
    });
  });

  it('ADMIN_TIMEOUT_MS bounds the wait for an answer; ADMIN_CONNECT_TIMEOUT_MS the connect', async () => {
    expect(adminClientOptionsFromEnv(loadEnv({}))).toMatchObject({
      baseUrl: 'http://127.0.0.1:8080',
      requestTimeoutMs: 60_000,
      connectTimeoutMs: 5_000,
      headers: {},
    });
    const options = adminClientOptionsFromEnv(
      loadEnv({ ADMIN_TIMEOUT_MS: '150', ADMIN_CONNECT_TIMEOUT_MS: '750' }),
    );
    expect(options).toMatchObject({ requestTimeoutMs: 150, connectTimeoutMs: 750 });

    // A sandbox whose latency never ends until the test says so: the client gives up first.
    let release: () => void = () => {};
    const sleep = (): Promise<void> => new Promise((resolve) => (release = resolve));
    const { url } = await recordingSandbox({ faults: { latencyMs: 1 }, sleep });
    const client = clientFromEnv({ ADMIN_BASE_URL: url, ADMIN_TIMEOUT_MS: '150' });
    const error = await adminFailure(() => client.listUsers());
    release();
    expect(error).toBeInstanceOf(AdminNoAnswerError);
    expect(classifyFailure(error)).toBe('transient');
  });

  it('a bad value stops start-up naming the variable', () => {
    for (const [name, value] of [
      ['ADMIN_AUTH_MODE', 'digest'],
      ['ADMIN_EXTRA_HEADERS', '["not","an","object"]'],
      ['ADMIN_TIMEOUT_MS', '0'],
      ['ADMIN_CONNECT_TIMEOUT_MS', 'soon'],
      ['ADMIN_BASE_URL', 'not a url'],
    ] as const) {
      let refused: unknown;
      try {
        loadEnv({ [name]: value });
      } catch (error) {
        refused = error;
      }
      expect(isPorterError(refused) && refused.code).toBe('PORTER_CONFIG_INVALID');
      expect((refused as Error).message).toContain(name);
    }
  });
});
