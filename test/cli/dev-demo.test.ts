import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runPorter } from '../helpers/porter-cli.js';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const prefix = freshPrefix('dev-demo');
afterAll(() => deletePrefix(testRedisUrl(), prefix));

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('the quick start: porter dev --demo --once', () => {
  it('imports the sample groups and HR feed, prints the report, and exits 2 for its planted bad rows', async () => {
    const result = await runPorter(
      [
        'dev',
        '--demo',
        '--once',
        '--sandbox-port',
        String(await freePort()),
        '--api-port',
        String(await freePort()),
        '--new-sandbox-port',
        '0',
      ],
      {
        REDIS_URL: testRedisUrl(),
        PORTER_PREFIX: prefix,
        PORTER_API_TOKEN: 'dev-demo-token-0123456789',
      },
    );
    expect(result.stderr).not.toMatch(/porter: /);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/importing examples\/groups\.csv as groups \(upsert\)/);
    expect(result.stdout).toMatch(/importing examples\/new-hires\.csv as users \(upsert\)/);
    // the groups all land; the report of the users has succeeded rows and the planted failures
    expect(result.stdout).toMatch(/9 succeeded/);
    const report = result.stdout.slice(result.stdout.indexOf('report of imp_'));
    expect(report).toMatch(/,succeeded,/);
    expect(report).toMatch(/,failed,,PORTER_ROW_INVALID,username,/);
    expect(report).toMatch(/^14,15,,yhassan,,failed,,PORTER_ROW_INVALID,primaryGroup,/m);
    expect(result.stdout).not.toMatch(/dev-demo-token/);
  }, 120_000);
});
