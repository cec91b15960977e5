/**
 * `porter api` starts without PORTER_API_TOKEN when a stored token or the OpenID Connect sign-in
 * is configured, and still refuses to start with no way in at all.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { AuditLog } from '../../src/audit/audit-log.js';
import { TokenStore } from '../../src/auth/token-store.js';
import { spawnApi, type ApiProcess } from '../helpers/api-process.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const prefix = freshPrefix('api-start');
const redis = new Redis(testRedisUrl());
const started: ApiProcess[] = [];

async function start(env: Record<string, string | undefined>): Promise<ApiProcess> {
  const api = await spawnApi({
    REDIS_URL: testRedisUrl(),
    PORTER_API_TOKEN: undefined,
    PORTER_OIDC_ISSUER: undefined,
    ...env,
  });
  started.push(api);
  return api;
}

afterEach(async () => {
  for (const api of started.splice(0)) {
    if (api.child.exitCode === null && api.child.signalCode === null) api.child.kill('SIGTERM');
    await api.exited;
  }
});
afterAll(async () => {
  await deletePrefix(testRedisUrl(), prefix);
  redis.disconnect();
});

describe('porter api without PORTER_API_TOKEN', () => {
  it('refuses to start when no token is stored and no OIDC is configured', async () => {
    const api = await start({ PORTER_PREFIX: `${prefix}:empty` });
    expect(await api.exited).toBe(78);
    expect(api.output()).toMatch(/PORTER_API_TOKEN: set a token.*porter tokens create/);
    expect(api.output()).toMatch(/\[PORTER_CONFIG_INVALID\]/);
  }, 60_000);

  it('starts with a stored token, which opens it; no token opens nothing', async () => {
    const audit = new AuditLog({ redis, prefix, retentionDays: 1 });
    const { token } = await new TokenStore(redis, prefix, audit).create(
      { name: 'ops', role: 'viewer' },
      { at: new Date().toISOString(), actionId: 'start', who: { name: 'test' } },
    );
    const api = await start({ PORTER_PREFIX: prefix });
    const url = await api.listening;
    expect(api.output()).toMatch(/sign in with stored tokens/);
    const listed = await fetch(`${url}/v1/imports`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    const anonymous = await fetch(`${url}/v1/imports`);
    expect(anonymous.status).toBe(401);
  }, 60_000);

  it('starts with OpenID Connect configured', async () => {
    const api = await start({
      PORTER_PREFIX: `${prefix}:oidc`,
      PORTER_OIDC_ISSUER: 'http://127.0.0.1:9/issuer',
      PORTER_OIDC_CLIENT_ID: 'porter',
      PORTER_OIDC_REDIRECT_URL: 'http://127.0.0.1:3000/v1/session/callback',
    });
    const url = await api.listening;
    expect(api.output()).toMatch(/sign in with OpenID Connect/);
    expect((await fetch(`${url}/v1/imports`)).status).toBe(401);
  }, 60_000);
});
