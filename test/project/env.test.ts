import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { envSchema, loadEnv } from '../../src/config/env.js';

describe('configuration from the environment', () => {
  it('has working defaults: the sandbox on 127.0.0.1:8080 and a local Redis', () => {
    const env = loadEnv({});
    // unset: the target `default` is the sandbox on 127.0.0.1:8080 (src/targets/targets.ts)
    expect(env.ADMIN_BASE_URL).toBeUndefined();
    expect(env).toMatchObject({
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORTER_PREFIX: 'porter',
      PORTER_MAX_UPLOAD_BYTES: 200 * 1024 * 1024,
      PORTER_RESULT_TTL_DAYS: 7,
      ADMIN_EXTRA_HEADERS: {},
    });
  });

  it.each([
    ['ADMIN_BASE_URL', 'not a url'],
    ['PORTER_MAX_ATTEMPTS', '0'],
    ['PORTER_PREFIX', 'has spaces'],
    ['ADMIN_AUTH_MODE', 'digest'],
    ['ADMIN_EXTRA_HEADERS', '{"x": 1}'],
    ['PORTER_BREAKER_THRESHOLD', '2'],
  ])('a bad %s stops start-up naming the variable', (name, value) => {
    expect(() => loadEnv({ [name]: value })).toThrow(
      expect.objectContaining({
        code: 'PORTER_CONFIG_INVALID',
        message: expect.stringMatching(new RegExp(`^${name}:`)),
      }),
    );
  });

  it('reads extra admin headers as JSON', () => {
    expect(loadEnv({ ADMIN_EXTRA_HEADERS: '{"x-tenant":"acme"}' }).ADMIN_EXTRA_HEADERS).toEqual({
      'x-tenant': 'acme',
    });
  });

  it('docs/configuration.md gives every variable its default', async () => {
    const page = await readFile('docs/configuration.md', 'utf8');
    const defaults = loadEnv({});
    for (const name of Object.keys(envSchema.shape)) {
      const row = page.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      const value: unknown = defaults[name as keyof typeof defaults];
      const documented = row!.split('|')[2]!.trim();
      const noDefault = value === undefined || (typeof value === 'object' && value !== null);
      if (noDefault) {
        expect(documented, name).toBe('–');
      } else {
        expect(documented, name).toContain(`\`${String(value)}\``);
      }
    }
  });
});
