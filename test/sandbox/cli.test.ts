/** `porter sandbox`: prints the URL it listens on, validates its flags (exit 64), closes on signals. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/admin/client.js';
import { AdminNoAnswerError, classifyFailure, type AdminError } from '../../src/admin/errors.js';
import { adminFailure } from '../helpers/sandbox.js';

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

/**
 * Starts `porter sandbox --port 0 ...args`, runs `use` with a client for it, then stops it:
 * SIGTERM and a clean exit by default, SIGKILL for a sandbox holding answers back.
 */
async function servingWith(
  args: string[],
  use: (client: AdminClient) => Promise<void>,
  options: { requestTimeoutMs?: number; stop?: 'SIGTERM' | 'SIGKILL' } = {},
): Promise<void> {
  const run = porter('sandbox', '--port', '0', ...args);
  try {
    const url = await listeningUrl(run);
    const client = new AdminClient({
      baseUrl: url,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    });
    try {
      await use(client);
    } finally {
      await client.close();
    }
  } finally {
    run.child.kill(options.stop ?? 'SIGTERM');
    const code = await run.exit;
    if ((options.stop ?? 'SIGTERM') === 'SIGTERM') expect(code).toBe(0);
  }
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

  it('takes auth, data file, seed, record limit and batch mode flags; never prints the secrets', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'porter-cli-'));
    const data = join(dir, 'state.ndjson');
    try {
      const run = porter(
        'sandbox',
        ...['--host', '127.0.0.1', '--port', '0', '--api-key', 'CLI-KEY-SECRET'],
        ...['--user', 'admin', '--password', 'CLI-PASS-SECRET', '--data', data],
        ...['--seed-users', '3', '--seed-groups', '1', '--seed-acls', '2'],
        ...['--max-records', '2', '--batch-failure', 'partial'],
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
      expect(await readFile(`${data}.journal`, 'utf8')).toContain('"new"');
      expect(run.stdout() + run.stderr()).not.toMatch(/SECRET/);
      expect(run.stdout()).toContain('maxRecords=2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Each fault flag in a process of its own, side by side: each shows its effect.
  it.concurrent('--fail-rate 1: every request is refused with 503 UNAVAILABLE', async () => {
    await servingWith(['--fail-rate', '1'], async (client) => {
      for (const call of [() => client.listUsers(), () => client.postUsers([{ username: 'a' }])]) {
        const error = await adminFailure(call);
        expect(error).toMatchObject({ status: 503, errorcode: 'UNAVAILABLE' });
        expect(classifyFailure(error)).toBe('transient');
      }
    });
  });

  it.concurrent('--rate-limit 1: past one request per second, 429 with Retry-After', async () => {
    await servingWith(['--rate-limit', '1'], async (client) => {
      // sent together, they arrive within one second: one is let in, the others refused
      const outcomes = await Promise.allSettled([1, 2, 3].map(() => client.listUsers()));
      const refused = outcomes.flatMap((outcome) =>
        outcome.status === 'rejected' ? [outcome.reason as AdminError] : [],
      );
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(refused).toHaveLength(2);
      for (const error of refused) {
        expect(error).toMatchObject({ status: 429, errorcode: 'RATE_LIMITED' });
        expect(error.retryAfterMs).toBeGreaterThanOrEqual(1_000);
      }
    });
  });

  it.concurrent('--batch-failure omit: 200 with only the records applied', async () => {
    await servingWith(['--batch-failure', 'omit'], async (client) => {
      const answer = await client.postUsers([
        { username: 'kept' },
        { username: 'kept' },
        { username: 'other' },
      ]);
      expect(answer.map((user) => user.username)).toEqual(['kept', 'other']);
      expect((await client.listUsers()).map((user) => user.username)).toEqual(['kept', 'other']);
    });
  });

  it.concurrent(
    '--drop-rate 1: an applied request gets no answer; a refused one is answered',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'porter-cli-'));
      const data = join(dir, 'state.ndjson');
      try {
        await servingWith(['--drop-rate', '1', '--data', data], async (client) => {
          const dropped = await adminFailure(() => client.postUsers([{ username: 'dropped.one' }]));
          expect(dropped).toBeInstanceOf(AdminNoAnswerError);
          expect(classifyFailure(dropped)).toBe('ambiguous');
          const refused = await adminFailure(() => client.deleteUsers([{ username: 'nobody' }]));
          expect(refused).toMatchObject({ status: 404, errorcode: 'NOT_FOUND' });
        });
        // applied and journaled, though never answered
        expect(await readFile(`${data}.journal`, 'utf8')).toContain('"dropped.one"');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it.concurrent('--latency: an answer held longer than the client waits never comes', async () => {
    await servingWith(
      ['--latency', '600000'],
      async (client) => {
        const error = await adminFailure(() => client.listUsers());
        expect(error).toBeInstanceOf(AdminNoAnswerError);
      },
      { requestTimeoutMs: 200, stop: 'SIGKILL' },
    );
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
