/**
 * Every option and path of the CLI is checked before anything is stored: a refusal is one line
 * with its code and exit code, no stack trace, and no import or export in Redis.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter, type CliResult } from '../helpers/porter-cli.js';

let pipeline: Pipeline;
let dir: string;
let input: string;
const INPUT_TEXT = csv(['username'], [['refused.one']]);

beforeAll(async () => {
  pipeline = await startPipeline();
  dir = await mkdtemp(join(tmpdir(), 'porter-refused-'));
  input = join(dir, 'users.csv');
  await writeFile(input, INPUT_TEXT);
  await mkdir(join(dir, 'a-directory'));
});
afterAll(async () => {
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

function porter(args: string[]): Promise<CliResult> {
  return runPorter(args, pipeline.childEnv());
}

function importArgs(...extra: string[]): string[] {
  return ['import', input, '--resource', 'users', '--mode', 'create', ...extra];
}

/** The command was refused with this exit code and error code in one line, nothing stored. */
async function expectRefused(result: CliResult, exitCode: number, code: string, text: RegExp) {
  expect(result.code).toBe(exitCode);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^porter: /);
  expect(lines[0]).toMatch(text);
  expect(lines[0]).toContain(`[${code}]`);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(await pipeline.context.store.list({ limit: 10 })).toEqual([]);
  expect(await pipeline.context.exportStore.list(10)).toEqual([]);
}

describe('refused before anything is stored', () => {
  it('a mistyped flag is never answered with a guess that deletes or overrides', async () => {
    // commander's nearest flag to --mapping is --missing, the deletion policy of a sync
    const result = await porter(importArgs('--mapping', 'mapping.json', '--wait'));
    await expectRefused(result, 64, 'PORTER_USAGE', /unknown option '--mapping'/);
    expect(result.stderr).not.toMatch(/--missing|Did you mean/);
    // a harmless guess is still offered
    const typo = await porter(importArgs('--batchsize', '5', '--wait'));
    await expectRefused(typo, 64, 'PORTER_USAGE', /\(Did you mean --batch-size\?\) \(see --help\)/);
  });

  it('--max-failures that is not a number or a percentage: 64', async () => {
    for (const value of ['abc', '-1']) {
      await expectRefused(
        await porter(importArgs('--max-failures', value, '--wait')),
        64,
        'PORTER_USAGE',
        /--max-failures must be a number of records or a percentage/,
      );
    }
  });

  it('an option the import would refuse is refused before Redis is asked', async () => {
    const result = await runPorter(importArgs('--delimiter', 'x'), {
      ...pipeline.childEnv(),
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    await expectRefused(result, 64, 'PORTER_USAGE', /Unsupported delimiter "x"/);
  });

  it('--map missing (66), a directory (64), not JSON (65)', async () => {
    await expectRefused(
      await porter(importArgs('--map', join(dir, 'no-such-map.json'))),
      66,
      'PORTER_NOT_FOUND',
      /--map .*no-such-map\.json: cannot read it \(ENOENT\)/,
    );
    await expectRefused(
      await porter(importArgs('--map', join(dir, 'a-directory'))),
      64,
      'PORTER_USAGE',
      /is a directory/,
    );
    const notJson = join(dir, 'map.json');
    await writeFile(notJson, 'columns: Login -> username');
    await expectRefused(
      await porter(importArgs('--map', notJson)),
      65,
      'PORTER_MAPPING_INVALID',
      /not valid JSON/,
    );
  });

  it('an input file that is missing (66) or a directory (64)', async () => {
    await expectRefused(
      await porter(['import', join(dir, 'nope.csv'), '--resource', 'users', '--mode', 'create']),
      66,
      'PORTER_NOT_FOUND',
      /input file .*nope\.csv: cannot read it \(ENOENT\)/,
    );
    await expectRefused(
      await porter(['import', join(dir, 'a-directory'), '--resource', 'users', '--mode', 'create']),
      64,
      'PORTER_USAGE',
      /is a directory/,
    );
  });

  it('--report a directory (64), in a missing directory (66), existing (64), the input itself (64 even with --force)', async () => {
    await expectRefused(
      await porter(importArgs('--wait', '--report', join(dir, 'a-directory'))),
      64,
      'PORTER_USAGE',
      /is a directory; name a file/,
    );
    await expectRefused(
      await porter(importArgs('--wait', '--report', join(dir, 'missing', 'report.csv'))),
      66,
      'PORTER_NOT_FOUND',
      /directory .*missing does not exist/,
    );
    const existing = join(dir, 'existing-report.csv');
    await writeFile(existing, 'keep me');
    await expectRefused(
      await porter(importArgs('--wait', '--report', existing)),
      64,
      'PORTER_USAGE',
      /exists; pass --force to overwrite it/,
    );
    expect(await readFile(existing, 'utf8')).toBe('keep me');
    // a symbolic link to the input counts too (see test/cli/paths.test.ts)
    await expectRefused(
      await porter(importArgs('--wait', '--force', '--report', input)),
      64,
      'PORTER_USAGE',
      /is the input file/,
    );
    expect(await readFile(input, 'utf8')).toBe(INPUT_TEXT);
  });

  it('porter report --out an existing file, and porter export --out a file (64)', async () => {
    const existing = join(dir, 'existing-out.csv');
    await writeFile(existing, 'keep me');
    await expectRefused(
      await porter(['report', 'imp_whatever', '--out', existing]),
      64,
      'PORTER_USAGE',
      /exists; pass --force/,
    );
    await expectRefused(
      await porter(['export', '--resource', 'users', '--out', input]),
      64,
      'PORTER_USAGE',
      /is a file; name a directory/,
    );
    await expectRefused(
      await porter(['sandbox', '--port', '0', '--data', join(dir, 'a-directory')]),
      64,
      'PORTER_USAGE',
      /is a directory/,
    );
  });
});

describe('what passes', () => {
  it('--force overwrites a report file; --allow-lookalike travels with the import; report --out --force', async () => {
    const report = join(dir, 'forced-report.csv');
    await writeFile(report, 'old report');
    const result = await porter(
      importArgs(
        '--allow-lookalike',
        '--max-failures',
        '5%',
        '--wait',
        '--report',
        report,
        '--force',
      ),
    );
    expect(result.code).toBe(0);
    const importId = result.stdout.trim();
    expect(await readFile(report, 'utf8')).toMatch(/refused\.one/);
    expect((await pipeline.context.store.get(importId))?.options).toMatchObject({
      allowLookalike: true,
      maxFailures: '5%',
    });

    const unknown = await porter(['report', 'imp_unknown', '--out', join(dir, 'unknown.csv')]);
    expect(unknown.code).toBe(66);
    expect(unknown.stderr).toMatch(/\[PORTER_NOT_FOUND\]/);
    // no file is made for an import that does not exist
    await expect(readFile(join(dir, 'unknown.csv'))).rejects.toThrow(/ENOENT/);

    const again = await porter([
      'report',
      importId,
      '--out',
      report,
      '--force',
      '--format',
      'json',
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(await readFile(report, 'utf8'))).toEqual([
      expect.objectContaining({ key: 'refused.one', status: 'succeeded' }),
    ]);
  });
});
