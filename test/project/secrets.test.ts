import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { REDACT_PATHS } from '../../src/util/logger.js';
import { redactUrl } from '../../src/util/redact-url.js';
import { startTestSandbox } from '../helpers/sandbox.js';

describe('secrets never reach logs or errors', () => {
  it('the logger redacts passwords, keys, tokens and authorization headers', () => {
    let output = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    logger.info({
      ADMIN_PASSWORD: 'hunter2-password',
      env: { ADMIN_API_KEY: 'key-123456', PORTER_API_TOKEN: 'token-abcdef' },
      req: { headers: { authorization: 'Bearer token-abcdef', apikey: 'key-123456' } },
      auth: { password: 'hunter2-password', apiKey: 'key-123456' },
    });
    expect(output).not.toMatch(/hunter2|key-123456|token-abcdef/);
    expect(output).toContain('[redacted]');
  });

  it('a refused request names the path, never the credentials', async () => {
    const sandbox = await startTestSandbox({
      apiKey: 'the-right-key',
      user: 'admin',
      password: 'right-pass',
    });
    const client = new AdminClient({
      baseUrl: sandbox.url,
      auth: {
        apiKey: 'wrong-key-0987',
        user: 'admin',
        password: 'wrong-pass-6543',
        userPasswordMode: 'params',
      },
    });
    try {
      const error = (await client.listUsers().catch((caught: unknown) => caught)) as Error & {
        details: unknown;
      };
      expect(error).toMatchObject({ status: 401 });
      const text = `${error.message} ${JSON.stringify(error.details)} ${String(error.stack)}`;
      expect(text).not.toMatch(/wrong-key-0987|wrong-pass-6543/);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it('URLs in messages lose their password', () => {
    expect(redactUrl('redis://:s3cret@redis.example:6379/0')).not.toContain('s3cret');
  });
});
