import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPorter } from '../helpers/porter-cli.js';
import { deletePrefix, freshPrefix, testRedisUrl, waitFor } from '../helpers/redis.js';

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

describe("the README's migration: porter dev --demo, then commands in another shell", () => {
  it('migrates the demo sandbox (old) into the empty one (new) through the targets file it writes, and diff --from old --to new exits 0', async () => {
    const demoPrefix = freshPrefix('dev-migrate');
    const out = await mkdtemp(join(tmpdir(), 'porter-dev-migrate-'));
    const child = spawn(
      'node',
      [
        'bin/porter.js',
        'dev',
        '--demo',
        '--sandbox-port',
        String(await freePort()),
        '--new-sandbox-port',
        '0',
        '--api-port',
        String(await freePort()),
      ],
      {
        env: {
          ...process.env,
          LOG_LEVEL: 'error',
          REDIS_URL: testRedisUrl(),
          PORTER_PREFIX: demoPrefix,
          PORTER_API_TOKEN: 'dev-demo-token-0123456789',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = once(child, 'exit');
    try {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      await waitFor(async () => (stdout.includes('serving;') ? true : undefined), {
        timeoutMs: 60_000,
        what: 'porter dev to serve',
      });
      const exported = /^export PORTER_TARGETS_FILE=(.+)$/m.exec(stdout)?.[1];
      expect(exported).toBe('.porter/dev-targets.json');
      // the other shell: no ADMIN_BASE_URL, only what the dev process printed
      const shell = {
        REDIS_URL: testRedisUrl(),
        PORTER_PREFIX: demoPrefix,
        PORTER_TARGETS_FILE: exported!,
      };
      const before = await runPorter(
        ['diff', '--from', 'old', '--to', 'new', '--out', join(out, 'd0')],
        shell,
      );
      expect(before.code).toBe(2);
      const plan = await runPorter(
        ['migrate', '--from', 'old', '--to', 'new', '--dry-run', '--wait'],
        shell,
      );
      expect(plan.code).toBe(0);
      expect(plan.stderr).toMatch(/\[dry run\]/);
      const migrated = await runPorter(
        [
          'migrate',
          '--from',
          'old',
          '--to',
          'new',
          '--wait',
          '--report',
          join(out, 'migration-report'),
        ],
        shell,
      );
      expect(migrated.stderr).toMatch(/users\s+done\s+(\d+)\/\1 users: \1 succeeded/);
      expect(migrated.code).toBe(0);
      const after = await runPorter(
        ['diff', '--from', 'old', '--to', 'new', '--out', join(out, 'd1')],
        shell,
      );
      expect(after.stderr).toContain('equal');
      expect(after.code).toBe(0);
    } finally {
      child.kill('SIGINT');
      await exited;
      await rm(out, { recursive: true, force: true });
      await deletePrefix(testRedisUrl(), demoPrefix);
    }
    // stopped: the file naming its ports is gone
    expect(existsSync('.porter/dev-targets.json')).toBe(false);
  }, 180_000);
});
