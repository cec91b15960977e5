/**
 * `porter watch` as a real process: SIGTERM finishes the file in hand (its import runs to its
 * end, the file is moved with its report), takes no other file, and exits 0.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_MODES } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';
import { namesIn, tempFolder } from './watch-fixture.js';

let pipeline: Pipeline;
let folder: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  // each call waits: the import of the first file is still running when the signal comes
  pipeline = await startPipeline({
    sandbox: { faults: { latencyMs: 800 } },
    workerOptions: { concurrency: 1 },
  });
  folder = await tempFolder();
});
afterAll(async () => {
  await pipeline?.close();
  await folder?.remove();
});

function rows(prefix: string, count: number): string {
  return csv(
    ['username'],
    Array.from({ length: count }, (_, index) => [`${prefix}.${index + 1}`]),
  );
}

describe('porter watch, the command', () => {
  it('refuses a missing folder and a mode the import does not know, before it watches', async () => {
    const missing = await runPorter(
      ['watch', join(folder.dir, 'nope'), '--resource', 'users', '--mode', 'create'],
      pipeline.childEnv(),
    );
    expect(missing.code).toBe(66);
    expect(missing.stderr).toMatch(/not a directory/);
    const badMode = await runPorter(
      ['watch', folder.dir, '--resource', 'users', '--mode', 'merge'],
      pipeline.childEnv(),
    );
    expect(badMode.code).not.toBe(0);
    expect(badMode.stderr).toContain(`--mode must be one of ${IMPORT_MODES.join(', ')}`);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s finishes the file in hand, leaves the next one, and exits 0',
    async (signal) => {
      const dir = join(folder.dir, signal);
      await mkdir(dir);
      await writeFile(join(dir, '1-first.csv'), rows(`${signal}.first`, 30));
      await writeFile(join(dir, '2-second.csv'), rows(`${signal}.second`, 5));
      const child = spawn(
        'node',
        [
          'bin/porter.js',
          'watch',
          dir,
          '--resource',
          'users',
          '--mode',
          'create',
          '--batch-size',
          '10',
          '--settle-ms',
          '200',
        ],
        { env: { ...process.env, LOG_LEVEL: 'warn', ...pipeline.childEnv() }, stdio: 'pipe' },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, 'exit');
      const importId = await waitFor(
        () => /1-first\.csv: import (imp_\w+) started/.exec(output)?.[1],
        {
          timeoutMs: 30_000,
          what: 'the first import to start',
        },
      );
      // the import is in hand, not over, when the signal comes
      const inHand = await waitFor(
        async () => {
          const info = await pipeline.context.store.get(importId);
          return info?.state === 'running' ? info : undefined;
        },
        { timeoutMs: 30_000, what: 'the first import to run' },
      );
      expect(inHand.settled).toBe(false);
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      expect(code, output).toBe(0);
      const info = await pipeline.context.store.get(importId);
      expect(info).toMatchObject({ state: 'completed', counts: { succeeded: 30 } });
      expect(await namesIn(dir)).toEqual(['2-second.csv', 'processed']);
      expect(await namesIn(join(dir, 'processed'))).toEqual([
        '1-first.csv',
        '1-first.csv.report.csv',
      ]);
      const report = await readFile(join(dir, 'processed', '1-first.csv.report.csv'), 'utf8');
      expect(report.trim().split('\n')).toHaveLength(31);
      expect(output).toMatch(/1-first\.csv → processed\/1-first\.csv/);
    },
  );
});
