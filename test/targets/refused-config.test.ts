/**
 * A targets file that is refused ends the process at once with exit 78, whichever command read
 * it: `targets`, `import`, `worker` and `api` are run as real processes with a deadline (a
 * process that printed the refusal and then waited on an open Redis connection runs into it).
 * Secret files and the targets file are read as regular files of bounded size: a device or a
 * FIFO is refused, never read without end nor waited on.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

/** Well past a start-up on a loaded machine; a hanging process is killed at it. */
const DEADLINE_MS = 45_000;

let dir: string;
const prefix = freshPrefix('refused-config');

interface Ended {
  /** The exit status, or null when the deadline killed it. */
  code: number | null;
  stderr: string;
}

function porter(args: string[], env: Record<string, string>): Promise<Ended> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['bin/porter.js', ...args],
      {
        timeout: DEADLINE_MS,
        killSignal: 'SIGKILL',
        env: {
          ...process.env,
          LOG_LEVEL: 'error',
          REDIS_URL: testRedisUrl(),
          PORTER_PREFIX: prefix,
          PORTER_API_TOKEN: 'refused-config-test-token-0123',
          ...env,
        },
      },
      (error, _stdout, stderr) => {
        const failed = error as (Error & { code?: number | string; killed?: boolean }) | null;
        const code = failed === null ? 0 : failed.killed ? null : Number(failed.code);
        resolve({ code, stderr });
      },
    );
  });
}

const COMMANDS: Record<string, (input: string) => string[]> = {
  targets: () => ['targets'],
  import: (input) => ['import', input, '--resource', 'users', '--mode', 'create', '--wait'],
  worker: () => ['worker'],
  api: () => ['api'],
};

let input: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-refused-config-'));
  input = join(dir, 'users.csv');
  await writeFile(input, 'username,email\nada,ada@example.com\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await deletePrefix(testRedisUrl(), prefix);
});

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
}

describe('a refused targets file', () => {
  const cases: [string, () => Promise<string>, RegExp][] = [
    [
      'an upper-case name',
      () => file('upper.json', { Prod: { url: 'http://127.0.0.1:1' } }),
      /Prod: not a target name/,
    ],
    [
      'a name with shell characters',
      () => file('shell.json', { 'prod;rm -rf': { url: 'http://127.0.0.1:1' } }),
      /not a target name/,
    ],
    [
      'an ftp:// URL',
      () => file('ftp.json', { prod: { url: 'ftp://files.example.com' } }),
      /prod\.url: an http:\/\/ or https:\/\/ URL/,
    ],
    ['a file that does not exist', async () => join(dir, 'absent.json'), /does not exist/],
  ];
  for (const [what, make, message] of cases) {
    it(`${what}: every command exits 78 at once`, async () => {
      const path = await make();
      const ended = await Promise.all(
        Object.entries(COMMANDS).map(async ([name, args]) => ({
          name,
          ...(await porter(args(input), { PORTER_TARGETS_FILE: path })),
        })),
      );
      for (const one of ended) {
        expect({ command: one.name, code: one.code }).toEqual({ command: one.name, code: 78 });
        expect(one.stderr).toMatch(message);
        expect(one.stderr).toContain('[PORTER_CONFIG_INVALID]');
        expect(one.stderr).not.toMatch(/\n\s+at /);
      }
    });
  }
});

describe('files that are not regular', () => {
  it('a secret file that is /dev/zero is refused, not read without end', async () => {
    const path = await file('zero.json', {
      prod: { url: 'http://127.0.0.1:1', apiKey: { file: '/dev/zero' } },
    });
    for (const command of ['targets', 'worker'] as const) {
      const ended = await porter(COMMANDS[command]!(input), { PORTER_TARGETS_FILE: path });
      expect(ended.code).toBe(78);
      expect(ended.stderr).toMatch(/prod\.apiKey: secret file \/dev\/zero is not a regular file/);
    }
  });

  it('a secret file or a targets file that is a FIFO is refused, not waited on', async () => {
    const fifo = join(dir, 'secret.fifo');
    execFileSync('mkfifo', [fifo]);
    const path = await file('fifo.json', {
      prod: { url: 'http://127.0.0.1:1', user: 'porter', password: { file: 'secret.fifo' } },
    });
    const secret = await porter(['targets'], { PORTER_TARGETS_FILE: path });
    expect(secret.code).toBe(78);
    expect(secret.stderr).toMatch(/prod\.password: secret file secret\.fifo is not a regular file/);
    const asTargets = await porter(['import', input, '--resource', 'users', '--mode', 'create'], {
      PORTER_TARGETS_FILE: fifo,
    });
    expect(asTargets.code).toBe(78);
    expect(asTargets.stderr).toMatch(/secret\.fifo is not a regular file/);
  });

  it('a secret file past the limit is refused; a missing one leaves its target unusable', async () => {
    await writeFile(join(dir, 'huge'), Buffer.alloc(65 * 1024, 'k'));
    const huge = await file('huge.json', {
      prod: { url: 'http://127.0.0.1:1', apiKey: { file: 'huge' } },
    });
    const refused = await porter(['targets'], { PORTER_TARGETS_FILE: huge });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/secret file huge is larger than 65536 bytes/);
    const missing = await file('missing-secret.json', {
      prod: { url: 'http://127.0.0.1:1', apiKey: { file: 'not-mounted-yet' } },
    });
    const listed = await porter(['targets'], { PORTER_TARGETS_FILE: missing });
    expect(listed.code).toBe(0);
  });
});
