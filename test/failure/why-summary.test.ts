/**
 * Failures say why in the summary: with the workers pointed at a closed port, refused by the
 * server's authentication, or paused by the breaker and then cancelled, the last line of
 * `porter import --wait`, `porter status` and the API's import (which the console shows) name
 * the reason, not only the counts.
 */
import { createServer } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelImport } from '../../src/app/imports.js';
import { buildApiApp } from '../../src/http/build-app.js';
import type { ImportInfo } from '../../src/model/import.js';
import { runPorter } from '../helpers/porter-cli.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';

let pipeline: Pipeline | undefined;
afterEach(async () => {
  await pipeline?.close();
  pipeline = undefined;
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 1;
}

async function twelveUsers(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'porter-why-'));
  const file = join(dir, 'users.csv');
  await writeFile(
    file,
    csv(
      ['username'],
      Array.from({ length: 12 }, (_, i) => [`why.${i}`]),
    ),
  );
  return file;
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('the summary says why records were not processed', () => {
  it('the admin server cannot be reached: the last line of --wait, status and the API say so', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    pipeline = await startPipeline({ env: { ADMIN_BASE_URL: url } });
    const env = { ...pipeline.childEnv(), ADMIN_BASE_URL: url };
    const run = await runPorter(
      ['import', await twelveUsers(), '--resource', 'users', '--mode', 'upsert', '--wait'],
      env,
    );
    expect(run.code, run.stderr).toBe(69);
    expect(run.stderr).toContain('12 unprocessed');
    expect(lastLine(run.stderr)).toBe(
      `12 unprocessed: not sent: cannot reach the admin server at ${url} (ECONNREFUSED) [PORTER_TARGET_UNREACHABLE]`,
    );
    const id = run.stdout.trim();
    const shown = await runPorter(['status', id], env);
    expect(lastLine(shown.stdout)).toContain(`cannot reach the admin server at ${url}`);

    const app = await buildApiApp({ context: pipeline.context, token: 'why-token-0123456789' });
    try {
      const answer = await app.inject({
        url: `/v1/imports/${id}`,
        headers: { authorization: 'Bearer why-token-0123456789' },
      });
      expect((answer.json() as ImportInfo).problems).toEqual([
        {
          status: 'unprocessed',
          code: 'PORTER_TARGET_UNREACHABLE',
          count: 12,
          message: `not sent: cannot reach the admin server at ${url} (ECONNREFUSED)`,
        },
      ]);
    } finally {
      await app.close();
    }
  });

  it("the admin server refuses porter's credentials: the last line says so", async () => {
    pipeline = await startPipeline({
      sandbox: { user: 'svc.why', password: 'right-password-0123456789' },
      env: { ADMIN_USER: 'svc.why', ADMIN_PASSWORD: 'wrong-password-0123456789' },
    });
    const env = {
      ...pipeline.childEnv(),
      ADMIN_USER: 'svc.why',
      ADMIN_PASSWORD: 'wrong-password-0123456789',
    };
    const run = await runPorter(
      ['import', await twelveUsers(), '--resource', 'users', '--mode', 'upsert', '--wait'],
      env,
    );
    expect(run.code, run.stderr).toBe(69);
    expect(lastLine(run.stderr)).toMatch(
      /^12 unprocessed: not sent: the admin server refused porter's credentials \(HTTP 401 on \w+ \S+\): .* \[PORTER_TARGET_UNREACHABLE\]$/,
    );
    expect(run.stderr).not.toContain('wrong-password');
  });

  it('paused by the breaker, then cancelled: the pause is said after the import moved on', async () => {
    pipeline = await startPipeline({
      sandbox: { faults: { failRate: 1 } },
      env: {
        PORTER_MAX_ATTEMPTS: '50',
        PORTER_BREAKER_MIN_CALLS: '5',
        PORTER_BREAKER_THRESHOLD: '0.5',
        PORTER_BREAKER_COOLDOWN_MS: '600000',
      },
    });
    const submitted = await pipeline.submit(
      csv(
        ['username'],
        Array.from({ length: 500 }, (_, i) => [`paused${i + 1}`]),
      ),
      // one read per record: the batches' calls are what the breaker counts
      { resource: 'users', mode: 'update', lookup: 'each', batchSize: 50 },
    );
    await waitFor(
      async () =>
        (await pipeline!.context.store.get(submitted.id))?.state === 'paused' ? true : undefined,
      { what: 'the import to pause' },
    );
    await cancelImport(pipeline.context, submitted.id);
    const info = await pipeline.waitFinal(submitted.id);
    expect(info.state).toBe('cancelled');
    expect(info.pausedBecause).toMatch(/the admin server failed \d+ of \d+ calls/);
    const shown = await runPorter(['status', submitted.id], pipeline.childEnv());
    expect(shown.stdout).toMatch(/unprocessed: .*PORTER_CANCELLED/);
    expect(lastLine(shown.stdout)).toMatch(/^paused on the way: the admin server failed \d+ of/);
  });
});
