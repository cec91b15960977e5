/**
 * Every import option, sync rails included, through every entry point that starts imports
 * later or from elsewhere: `porter schedule add --import`, `porter watch`, and the HTTP API's
 * upload fields. Each entry point must hand the import exactly the options `porter import` would.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listImportSchedules, deleteImportSchedule } from '../../src/app/import-schedules.js';
import { addImportOptions } from '../../src/cli/import-options.js';
import { importFieldsSchema, parseImportFields } from '../../src/http/import-request.js';
import type { ImportOptions } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { waitFor } from '../helpers/redis.js';

let pipeline: Pipeline;
let dir: string;
const MAPPING = { columns: { Login: 'username' }, ignore: [], defaults: {} };

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  dir = await mkdtemp(join(tmpdir(), 'porter-options-'));
  await writeFile(join(dir, 'mapping.json'), JSON.stringify(MAPPING));
  await writeFile(join(dir, 'protect.txt'), '# never touched\nboss\nroot.admin\n');
});
afterAll(async () => {
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

interface OptionCase {
  name: string;
  /** As given on a command line. */
  cli: () => string[];
  /** As given to the HTTP API. */
  http: Record<string, string>;
  /** A file such an import reads. */
  content: string;
  /** What the import's options then hold. */
  expected: Partial<ImportOptions>;
}

const CASES: OptionCase[] = [
  {
    name: 'the import options (upsert)',
    content: 'Login\nfeed.two\n',
    cli: () => [
      '--mode',
      'upsert',
      '--batch-size',
      '7',
      '--map',
      join(dir, 'mapping.json'),
      '--delimiter',
      ';',
      '--list-separator',
      ',',
      '--encoding',
      'windows-1252',
      '--empty-as-clear',
      '--allow-admin',
      '--allow-lookalike',
      '--max-failures',
      '5%',
      '--lookup',
      'each',
      '--dry-run',
      '--stream',
      '--target',
      'default',
    ],
    http: {
      target: 'default',
      mode: 'upsert',
      batchSize: '7',
      mapping: JSON.stringify(MAPPING),
      delimiter: ';',
      listSeparator: ',',
      encoding: 'windows-1252',
      emptyAsClear: 'true',
      allowAdmin: 'true',
      allowLookalike: 'true',
      maxFailures: '5%',
      lookup: 'each',
      dryRun: 'true',
      stream: 'true',
    },
    expected: {
      target: 'default',
      mode: 'upsert',
      batchSize: 7,
      delimiter: ';',
      listSeparator: ',',
      encoding: 'windows-1252',
      emptyAsClear: true,
      allowAdmin: true,
      allowLookalike: true,
      maxFailures: '5%',
      lookup: 'each',
      dryRun: true,
      stream: true,
    },
  },
  {
    name: 'the sync rails',
    content: 'username\nfeed.two\n',
    cli: () => [
      '--mode',
      'sync',
      '--missing',
      'delete',
      '--max-deletes',
      '3',
      '--protect',
      join(dir, 'protect.txt'),
      '--scope-group',
      'Staff',
      '--scope-match',
      '^feed\\.',
    ],
    http: {
      mode: 'sync',
      missing: 'delete',
      maxDeletes: '3',
      protect: '# never touched\nboss\nroot.admin\n',
      scopeGroup: 'Staff',
      scopeMatch: '^feed\\.',
    },
    expected: {
      mode: 'sync',
      sync: {
        missing: 'delete',
        maxDeletes: '3',
        protect: ['boss', 'root.admin'],
        scopeGroup: 'Staff',
        scopeMatch: '^feed\\.',
      },
    },
  },
];

describe.each(CASES)('$name through every entry point', (option) => {
  it('schedule add --import stores them', async () => {
    const file = join(dir, 'feed.csv');
    await writeFile(file, csv(['username'], [['feed.one']]));
    const name = `options-${option.expected.mode}`;
    const added = await runPorter(
      [
        'schedule',
        'add',
        name,
        '--cron',
        '0 3 * * *',
        '--import',
        file,
        '--resource',
        'users',
        ...option.cli(),
      ],
      pipeline.childEnv(),
    );
    expect(added.code, added.stderr).toBe(0);
    const schedule = (await listImportSchedules(pipeline.context)).find((s) => s.name === name);
    expect(schedule?.request.options).toMatchObject(option.expected);
    await deleteImportSchedule(pipeline.context, name);
  });

  it('watch starts its imports with them', async () => {
    const folder = join(dir, `watch-${option.expected.mode}`);
    await mkdir(folder);
    const child = spawn(
      'node',
      [
        'bin/porter.js',
        'watch',
        folder,
        '--resource',
        'users',
        '--settle-ms',
        '100',
        ...option.cli(),
      ],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...pipeline.childEnv() }, stdio: 'pipe' },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    try {
      await waitFor(() => (output.includes('watching') ? true : undefined), {
        timeoutMs: 30_000,
        what: `the watch to start: ${output}`,
      });
      await writeFile(join(folder, 'feed.csv'), option.content);
      const importId = await waitFor(() => /import (imp_\w+) started/.exec(output)?.[1], {
        timeoutMs: 30_000,
        what: 'the import to start',
      });
      const info = await pipeline.context.store.get(importId);
      expect(info?.options).toMatchObject(option.expected);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('the HTTP API takes them as fields', () => {
    const { options } = parseImportFields({ resource: 'users', ...option.http });
    expect(options).toMatchObject(option.expected);
  });
});

describe('one declaration of the import options', () => {
  it('every option a command line takes is a field of the HTTP API, and back', () => {
    const command = addImportOptions(new Command('probe'));
    const cli = command.options.map((option) => option.attributeName());
    // --map names a file whose content the API takes as `mapping`; the API also takes `format`
    const asHttp = cli.map((name) => (name === 'map' ? 'mapping' : name));
    const http = Object.keys(importFieldsSchema.shape).filter(
      (name) => name !== 'resource' && name !== 'format',
    );
    expect(new Set(asHttp)).toEqual(new Set(http));
    // and every option is tried above through every entry point
    const tried = new Set(CASES.flatMap((option) => Object.keys(option.http)));
    expect(new Set(http)).toEqual(tried);
  });
});
