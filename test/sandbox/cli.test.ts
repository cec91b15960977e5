/** `porter sandbox`: prints the URL it listens on, validates its flags (exit 64), closes on signals. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';

const PORTER = join(import.meta.dirname, '..', '..', 'bin', 'porter.js');

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function porter(...args: string[]): Run {
  const child = spawn(process.execPath, [PORTER, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** Resolves with the URL once the sandbox prints it; rejects if the process ends first. */
async function listeningUrl(run: Run): Promise<string> {
  const pattern = /listening on (http:\/\/\S+)/;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const match = pattern.exec(run.stdout());
      if (match?.[1]) {
        run.child.stdout?.off('data', check);
        resolve(match[1]);
      }
    };
    run.child.stdout?.on('data', check);
    void run.exit.then((code) => reject(new Error(`porter exited (${code}): ${run.stderr()}`)));
    check();
  });
}

describe('porter sandbox', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'serves under /wf/restapi/v2/admin/, prints its URL, and closes cleanly on %s',
    async (signal) => {
      const run = porter('sandbox', '--port', '0', '--seed-users', '5', '--seed-groups', '2');
      const url = await listeningUrl(run);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(run.stdout()).toContain('under /wf/restapi/v2/admin/');
      const client = new AdminClient({ baseUrl: url });
      try {
        expect(await client.listUsers()).toHaveLength(5);
      } finally {
        await client.close();
      }
      run.child.kill(signal);
      expect(await run.exit).toBe(0);
      expect(run.stdout()).toContain('closed');
    },
  );

  it('takes every flag: auth, data file, faults; never prints the secrets', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'porter-cli-'));
    const data = join(dir, 'state.ndjson');
    try {
      const run = porter(
        'sandbox',
        ...['--host', '127.0.0.1', '--port', '0', '--api-key', 'CLI-KEY-SECRET'],
        ...['--user', 'admin', '--password', 'CLI-PASS-SECRET', '--data', data],
        ...['--seed-users', '3', '--seed-groups', '1', '--seed-acls', '2', '--latency', '1'],
        ...['--fail-rate', '0', '--drop-rate', '0', '--rate-limit', '1000', '--max-records', '2'],
        ...['--batch-failure', 'partial'],
      );
      const url = await listeningUrl(run);
      const client = new AdminClient({ baseUrl: url, auth: { apiKey: 'CLI-KEY-SECRET' } });
      try {
        expect(await client.listAcls()).toHaveLength(2);
        await expect(
          client.postUsers([{ username: 'a' }, { username: 'b' }, { username: 'c' }]),
        ).rejects.toMatchObject({
          status: 413,
        });
        await expect(
          client.postUsers([{ username: 'new' }, { username: 'new' }]),
        ).rejects.toMatchObject({
          status: 409,
        });
      } finally {
        await client.close();
      }
      run.child.kill('SIGTERM');
      expect(await run.exit).toBe(0);
      expect(await readFile(data, 'utf8')).toContain('"new"');
      expect(run.stdout() + run.stderr()).not.toMatch(/SECRET/);
      expect(run.stdout()).toContain('maxRecords=2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Each case spawns a process; running them side by side keeps the file quick.
  it.concurrent.for([
    [['--port', '70000'], 'port'],
    [['--port', 'eighty'], 'port'],
    [['--latency', '-5'], 'latency'],
    [['--fail-rate', '1.5'], 'fail-rate'],
    [['--drop-rate', 'often'], 'drop-rate'],
    [['--rate-limit', '2.5'], 'rate-limit'],
    [['--max-records', '-1'], 'max-records'],
    [['--batch-failure', 'some'], 'batch-failure'],
    [['--seed-users', 'many'], 'seed-users'],
    [['--user', 'admin'], 'password'],
  ] as const)(
    'refuses %j with a clear message and exit code 64',
    async ([args, named], { expect }) => {
      const run = porter('sandbox', '--port', '0', ...args);
      expect(await run.exit).toBe(64);
      expect(run.stderr()).toContain(named);
      expect(run.stdout()).not.toContain('listening');
    },
  );

  it('a port in use is a clear message and exit code 64', async () => {
    const first = porter('sandbox', '--port', '0');
    const url = await listeningUrl(first);
    const port = new URL(url).port;
    const second = porter('sandbox', '--port', port);
    expect(await second.exit).toBe(64);
    expect(second.stderr()).toContain('EADDRINUSE');
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
  });
});
