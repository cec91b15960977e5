/**
 * What was asked is what is done, on the command line: every command refuses an option it does
 * not take (exit 64, one line, nothing stored), and a schedule carries every option it is given
 * (the import's, the time zone, the export's) or refuses it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSchedules } from '../../src/app/exports.js';
import { listImportSchedules } from '../../src/app/import-schedules.js';
import { registerCommands } from '../../src/cli/commands/index.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';

let pipeline: Pipeline;
let dir: string;

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  dir = await mkdtemp(join(tmpdir(), 'porter-unknown-options-'));
});
afterAll(async () => {
  await pipeline?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The program as src/cli/main.ts makes it, every command registered, its errors thrown. */
async function program(): Promise<Command> {
  const made = new Command()
    .name('porter')
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  await registerCommands(made, ['node', 'porter']);
  return made;
}

/** Values of the options some command requires, so that its parse goes on to the others. */
const REQUIRED_VALUES: Record<string, string> = {
  '--mode': 'create',
  '--resource': 'users',
  '--name': 'someone',
  '--role': 'viewer',
  '--map': 'mapping.json',
  '--cron': '0 2 * * *',
};

/** Every command that runs (has an action), by its path of names. */
function runnable(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  const found: { path: string[]; command: Command }[] = [];
  for (const sub of command.commands) {
    const subPath = [...path, sub.name()];
    // commander keeps whether a command has an action in a field of its own
    if ((sub as unknown as { _actionHandler: unknown })._actionHandler) {
      found.push({ path: subPath, command: sub });
    }
    found.push(...runnable(sub, subPath));
  }
  return found;
}

describe('every command refuses an option it does not take', () => {
  it('commander refuses it on each command, before anything runs', async () => {
    const commands = runnable(await program());
    expect(commands.map((each) => each.path.join(' '))).toEqual(
      expect.arrayContaining(['import', 'sync', 'schedule add', 'undo', 'migrate', 'audit']),
    );
    for (const { path, command } of commands) {
      const required = command.options.filter((option) => option.mandatory);
      const args: string[] = [];
      for (const option of required) {
        const value = REQUIRED_VALUES[option.long!];
        expect(value, `a value for ${path.join(' ')} ${option.long}`).toBeDefined();
        args.push(option.long!, value!);
      }
      const fresh = await program();
      const parsed = fresh.parseAsync(['node', 'porter', ...path, ...args, '--dryrun'], {
        from: 'node',
      });
      await expect(parsed, path.join(' ')).rejects.toBeInstanceOf(CommanderError);
      await parsed.catch((error: CommanderError) => {
        expect(error.code, path.join(' ')).toBe('commander.unknownOption');
        expect(error.message, path.join(' ')).toContain("'--dryrun'");
      });
    }
  });

  it("a schedule's --timezone is refused (exit 64, one line), not run in UTC", async () => {
    const result = await runPorter(
      [
        'schedule',
        'add',
        'nightly',
        '--cron',
        '0 2 * * *',
        '--resource',
        'users',
        '--timezone',
        'Europe/Berlin',
      ],
      pipeline.childEnv(),
    );
    expect(result.code).toBe(64);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/unknown option '--timezone'.*\[PORTER_USAGE\]/);
    expect(await listSchedules(pipeline.context)).toEqual([]);
  });
});

describe('a schedule carries every option it is given', () => {
  it('an import schedule stores each import option, the zone and --even-unchanged', async () => {
    const feed = join(dir, 'feed.csv');
    const mapping = join(dir, 'mapping.json');
    const protect = join(dir, 'protect.txt');
    await writeFile(feed, 'username\nfeed.one\n');
    await writeFile(mapping, JSON.stringify({ columns: { Login: 'username' } }));
    await writeFile(protect, 'keep.me\n');
    /** Each option of `schedule add` an import schedule takes: what to give, what is stored. */
    const given: Record<string, { args: string[]; stored: (info: Stored) => unknown }> = {
      '--cron': { args: ['0 3 * * 1'], stored: (info) => info.cron },
      '--tz': { args: ['Europe/Berlin'], stored: (info) => info.tz },
      '--resource': { args: ['users'], stored: (info) => info.request.options.resource },
      '--import': { args: [feed], stored: (info) => info.request.file },
      '--even-unchanged': { args: [], stored: (info) => info.request.evenUnchanged },
      '--mode': { args: ['sync'], stored: (info) => info.request.options.mode },
      '--target': { args: ['default'], stored: (info) => info.request.options.target },
      '--batch-size': { args: ['7'], stored: (info) => info.request.options.batchSize },
      '--map': { args: [mapping], stored: (info) => info.request.options.mapping?.columns },
      '--delimiter': { args: [';'], stored: (info) => info.request.options.delimiter },
      '--encoding': { args: ['windows-1252'], stored: (info) => info.request.options.encoding },
      '--list-separator': { args: [','], stored: (info) => info.request.options.listSeparator },
      '--empty-as-clear': { args: [], stored: (info) => info.request.options.emptyAsClear },
      '--allow-admin': { args: [], stored: (info) => info.request.options.allowAdmin },
      '--allow-lookalike': { args: [], stored: (info) => info.request.options.allowLookalike },
      '--max-failures': { args: ['5%'], stored: (info) => info.request.options.maxFailures },
      '--lookup': { args: ['each'], stored: (info) => info.request.options.lookup },
      '--dry-run': { args: [], stored: (info) => info.request.options.dryRun },
      '--missing': { args: ['lock'], stored: (info) => info.request.options.sync?.missing },
      '--max-deletes': { args: ['10'], stored: (info) => info.request.options.sync?.maxDeletes },
      '--protect': { args: [protect], stored: (info) => info.request.options.sync?.protect },
      '--scope-group': { args: ['Staff'], stored: (info) => info.request.options.sync?.scopeGroup },
      '--scope-match': { args: ['^a'], stored: (info) => info.request.options.sync?.scopeMatch },
    };
    const exportOnly = ['--format', '--out', '--keep'];
    // a schedule that reads a directory source instead of --import FILE (checked below)
    const sourceOnly = ['--source', '--incremental'];
    // refused with --mode sync; carried as every import option is (import-option-entry-points)
    const notWithSync = ['--stream'];
    const add = (await program()).commands
      .find((command) => command.name() === 'schedule')!
      .commands.find((command) => command.name() === 'add')!;
    // a new option of `schedule add` is placed here, or it is not known to be carried
    expect(add.options.map((option) => option.long!).sort()).toEqual(
      [...Object.keys(given), ...exportOnly, ...sourceOnly, ...notWithSync].sort(),
    );

    const result = await runPorter(
      [
        'schedule',
        'add',
        'hr-feed',
        ...Object.entries(given).flatMap(([flag, { args }]) => [flag, ...args]),
      ],
      pipeline.childEnv(),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [info] = (await listImportSchedules(pipeline.context)) as Stored[];
    const stored = Object.fromEntries(
      Object.entries(given).map(([flag, { stored: read }]) => [flag, read(info!)]),
    );
    expect(stored).toEqual({
      '--cron': '0 3 * * 1',
      '--tz': 'Europe/Berlin',
      '--resource': 'users',
      '--import': feed,
      '--even-unchanged': true,
      '--mode': 'sync',
      '--target': 'default',
      '--batch-size': 7,
      '--map': { Login: 'username' },
      '--delimiter': ';',
      '--encoding': 'windows-1252',
      '--list-separator': ',',
      '--empty-as-clear': true,
      '--allow-admin': true,
      '--allow-lookalike': true,
      '--max-failures': '5%',
      '--lookup': 'each',
      '--dry-run': true,
      '--missing': 'lock',
      '--max-deletes': '10',
      '--protect': ['keep.me'],
      '--scope-group': 'Staff',
      '--scope-match': '^a',
    });

    // an export's options are refused on an import schedule, and the other way round
    for (const flag of exportOnly) {
      const value = flag === '--keep' ? '3' : flag === '--format' ? 'json' : dir;
      const refused = await runPorter(
        ['schedule', 'add', 'mixed', '--cron', '0 2 * * *', '--resource', 'users'].concat([
          '--import',
          feed,
          '--mode',
          'upsert',
          flag,
          value,
        ]),
        pipeline.childEnv(),
      );
      expect(refused.code, flag).toBe(64);
      expect(refused.stderr, flag).toContain(`${flag} is for export schedules, not --import`);
    }
    const importOption = await runPorter(
      ['schedule', 'add', 'mixed', '--cron', '0 2 * * *', '--resource', 'users', '--dry-run'],
      pipeline.childEnv(),
    );
    expect(importOption.code).toBe(64);
    expect(importOption.stderr).toContain('--dry-run goes with --import FILE');

    const sources = join(dir, 'sources.json');
    await writeFile(
      sources,
      JSON.stringify({
        hr: { kind: 'ldap', url: 'ldap://127.0.0.1:1', baseDN: 'dc=example', attributes: ['uid'] },
      }),
    );
    const fromSource = await runPorter(
      ['schedule', 'add', 'hr-directory', '--cron', '0 3 * * *', '--resource', 'users'].concat([
        '--mode',
        'upsert',
        '--source',
        'hr',
        '--incremental',
      ]),
      { ...pipeline.childEnv(), PORTER_SOURCES_FILE: sources },
    );
    expect(fromSource.stderr).toBe('');
    expect(fromSource.code).toBe(0);
    const directory = (await listImportSchedules(pipeline.context)).find(
      (schedule) => schedule.name === 'hr-directory',
    );
    expect(directory?.request).toMatchObject({
      source: { name: 'hr', incremental: true },
      options: { resource: 'users', mode: 'upsert' },
    });
    expect(directory?.request.file).toBeUndefined();
  });

  it('an export schedule stores its zone, target, format, directory and runs kept', async () => {
    const out = join(dir, 'exports');
    const result = await runPorter(
      [
        'schedule',
        'add',
        'nightly-export',
        '--cron',
        '0 4 * * *',
        '--tz',
        'America/New_York',
        '--resource',
        'groups',
        '--format',
        'json',
        '--out',
        out,
        '--keep',
        '3',
        '--target',
        'default',
      ],
      pipeline.childEnv(),
    );
    expect(result.code).toBe(0);
    const info = (await listSchedules(pipeline.context)).find(
      (each) => each.name === 'nightly-export',
    );
    expect(info).toMatchObject({
      cron: '0 4 * * *',
      tz: 'America/New_York',
      keep: 3,
      request: { resource: 'groups', format: 'json', target: 'default' },
    });
    expect(info!.request.outDir).toContain(out);
  });
});

interface Stored {
  cron: string;
  tz?: string;
  request: {
    file: string;
    evenUnchanged?: boolean;
    options: {
      resource: string;
      mode: string;
      target?: string;
      batchSize: number;
      mapping?: { columns?: Record<string, string> };
      delimiter?: string;
      encoding?: string;
      listSeparator: string;
      emptyAsClear: boolean;
      allowAdmin: boolean;
      allowLookalike: boolean;
      maxFailures?: string;
      lookup?: string;
      dryRun: boolean;
      sync?: {
        missing?: string;
        maxDeletes?: string;
        protect?: string[];
        scopeGroup?: string;
        scopeMatch?: string;
      };
    };
  };
}
