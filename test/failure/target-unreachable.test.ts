/**
 * "Nothing could be sent" is not "some records failed": when the target cannot be reached, or
 * refuses porter's credentials, and no record of the import was sent, the import ends `failed`
 * with the reason and PORTER_TARGET_UNREACHABLE, and `porter import --wait` exits 69 (not 2),
 * so a cron line can tell an outage or a wrong key from bad rows. An import of which something
 * was sent keeps its usual end.
 */
import { createServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/build-app.js';
import type { ImportInfo } from '../../src/model/import.js';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline | undefined;
let dir: string;
let input: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-unreachable-'));
  input = join(dir, 'users.csv');
  await writeFile(
    input,
    csv(
      ['username'],
      Array.from({ length: 12 }, (_, i) => [`down.${i}`]),
    ),
  );
});
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 1;
}

const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

describe('nothing could be sent', () => {
  it('a target that cannot be reached: failed, PORTER_TARGET_UNREACHABLE, exit 69; the API says so', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    pipeline = await startPipeline({ env: { ADMIN_BASE_URL: url } });
    const env = { ...pipeline.childEnv(), ADMIN_BASE_URL: url };
    for (const mode of ['upsert', 'update']) {
      const run = await runPorter(
        ['import', input, '--resource', 'users', '--mode', mode, '--wait'],
        env,
      );
      expect(run.code, run.stderr).toBe(69);
      expect(run.stderr).toContain(`cannot reach the admin server at ${url}`);
      expect(run.stderr).toContain('PORTER_TARGET_UNREACHABLE');
      const id = run.stdout.trim();
      const info = (await pipeline.context.store.get(id))!;
      expect(info).toMatchObject({
        state: 'failed',
        reasonCode: 'PORTER_TARGET_UNREACHABLE',
        reason: expect.stringMatching(/^nothing sent: cannot reach the admin server at /),
        counts: { succeeded: 0, unprocessed: 12 },
      });
      // porter status follows it with the same exit code
      const followed = await runPorter(['status', id, '--follow'], env);
      expect(followed.code).toBe(69);

      const app = await buildApiApp({ context: pipeline.context, token: 'down-token-0123456789' });
      try {
        const answer = await app.inject({
          url: `/v1/imports/${id}`,
          headers: { authorization: 'Bearer down-token-0123456789' },
        });
        expect(answer.json()).toMatchObject({
          state: 'failed',
          reasonCode: 'PORTER_TARGET_UNREACHABLE',
          reason: expect.stringContaining(`cannot reach the admin server at ${url}`),
          problems: [{ status: 'unprocessed', code: 'PORTER_TARGET_UNREACHABLE', count: 12 }],
        } satisfies Partial<Record<keyof ImportInfo, unknown>>);
      } finally {
        await app.close();
      }
    }
  });

  it("a target that refuses porter's credentials: the same, and the password is never shown", async () => {
    pipeline = await startPipeline({
      sandbox: { user: 'svc.down', password: 'right-password-0123456789' },
      env: { ADMIN_USER: 'svc.down', ADMIN_PASSWORD: 'wrong-password-0123456789' },
    });
    const run = await runPorter(
      ['import', input, '--resource', 'users', '--mode', 'upsert', '--wait'],
      {
        ...pipeline.childEnv(),
        ADMIN_USER: 'svc.down',
        ADMIN_PASSWORD: 'wrong-password-0123456789',
      },
    );
    expect(run.code, run.stderr).toBe(69);
    expect(lastLine(run.stderr)).toMatch(
      /^12 unprocessed: not sent: the admin server refused porter's credentials \(HTTP 401 on \w+ \S+\): .* \[PORTER_TARGET_UNREACHABLE\]$/,
    );
    expect(run.stderr).not.toContain('wrong-password');
    const info = (await pipeline.context.store.get(run.stdout.trim()))!;
    expect(info).toMatchObject({ state: 'failed', reasonCode: 'PORTER_TARGET_UNREACHABLE' });
  });
});

describe('the rule itself', () => {
  it('an import of which a row was sent, or that ended, is not failed by it', async () => {
    pipeline = await startPipeline({ workers: false });
    const { store, journal } = pipeline.context;
    const text = csv(['username'], [['one'], ['two']]);
    const sent = await pipeline.submit(text, { resource: 'users', mode: 'create' });
    await journal.markSent(sent.id, [2]);
    expect(await store.failUnsent(sent.id, 'nothing sent: x', 'PORTER_TARGET_UNREACHABLE')).toBe(
      false,
    );
    expect((await store.get(sent.id))!.state).toBe('queued');
    const unsent = await pipeline.submit(text, { resource: 'users', mode: 'create' });
    expect(await store.failUnsent(unsent.id, 'nothing sent: x', 'PORTER_TARGET_UNREACHABLE')).toBe(
      true,
    );
    expect(await store.get(unsent.id)).toMatchObject({
      state: 'failed',
      reason: 'nothing sent: x',
      reasonCode: 'PORTER_TARGET_UNREACHABLE',
    });
    // ended already: no second end
    expect(await store.failUnsent(unsent.id, 'nothing sent: y', 'PORTER_TARGET_UNREACHABLE')).toBe(
      false,
    );
  });
});
