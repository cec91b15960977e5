import { resolve } from 'node:path';
import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import {
  addSchedule,
  cliOutDir,
  deleteSchedule,
  listExports,
  listSchedules,
} from '../../app/exports.js';
import {
  addImportSchedule,
  deleteImportSchedule,
  importScheduleRuns,
  listImportSchedules,
} from '../../app/import-schedules.js';
import { PorterError } from '../../errors/porter-error.js';
import type { ScheduleRun } from '../../imports/schedule-history.js';
import type { ImportScheduleInfo } from '../../queue/import-schedules.js';
import {
  EXPORT_FORMATS,
  EXPORT_RESOURCES,
  type ExportFormat,
  type ExportInfo,
  type ExportResource,
} from '../../export/export-types.js';
import type { ScheduleInfo } from '../../queue/schedules.js';
import { addImportOptions, importOptionsFrom, type ImportOptionValues } from '../import-options.js';
import { oneOf, positiveInteger } from '../options.js';
import { checkInputFile, checkOutputDirectory } from '../paths.js';
import { withContext } from '../with-context.js';

interface ScheduleAddOptions extends ImportOptionValues {
  import?: string;
  source?: string;
  incremental?: boolean;
  evenUnchanged?: boolean;
  cron: string;
  tz?: string;
  resource: ExportResource;
  format: ExportFormat;
  out?: string;
  keep?: number;
}

/** Recent exports searched for the runs of an export schedule. */
const EXPORTS_SEARCHED = 1000;

/** One line per run of an export schedule. */
export function describeExportRun(info: ExportInfo): string {
  const removed = info.removedAt ? '  files removed by retention' : '';
  const reason = info.reason ? `: ${info.reason}` : '';
  return `${info.createdAt}  ${info.id}  ${info.state}${reason}  ${info.written} records${removed}`;
}

/** One line per schedule. */
export function describeSchedule(info: ScheduleInfo): string {
  const { request } = info;
  const tz = info.tz ? ` (${info.tz})` : '';
  const keep = info.keep === undefined ? 'all runs kept' : `keeps ${info.keep}`;
  return (
    `${info.name}  "${info.cron}"${tz}  ${request.target ?? 'default'}: ${request.resource} as ${request.format} → ` +
    `${request.outDir}/${info.name}/  ${keep}  next ${info.next ?? '-'}`
  );
}

/** One line per import schedule. */
export function describeImportSchedule(info: ImportScheduleInfo): string {
  const { request } = info;
  const tz = info.tz ? ` (${info.tz})` : '';
  const unchanged = request.evenUnchanged ? '  even unchanged' : '';
  const input = request.source
    ? `source ${request.source.name}${request.source.incremental ? ' (incremental)' : ''}`
    : request.file;
  return (
    `${info.name}  "${info.cron}"${tz}  import ${input} → ${request.options.target ?? 'default'}: ` +
    `${request.options.resource} ${request.options.mode}${unchanged}  next ${info.next ?? '-'}`
  );
}

/** One line per run of an import schedule. */
export function describeRun(run: ScheduleRun): string {
  const what = run.importId ? ` import ${run.importId}` : '';
  const note = run.note ? `  ${run.note}` : '';
  return `${run.at}  ${run.outcome}${what}${note}`;
}

/** Adds an import schedule from `schedule add NAME --import FILE` or `--source NAME`. */
async function addImportScheduleCommand(
  name: string,
  input: { file: string } | { source: string },
  options: ScheduleAddOptions,
  command: Command,
): Promise<void> {
  const flag = 'file' in input ? '--import' : '--source';
  for (const exportOnly of ['out', 'keep', 'format']) {
    if (command.getOptionValueSource(exportOnly) === 'cli') {
      throw new PorterError('PORTER_USAGE', `--${exportOnly} is for export schedules, not ${flag}`);
    }
  }
  if ('source' in input) {
    if (options.evenUnchanged) {
      throw new PorterError('PORTER_USAGE', '--even-unchanged goes with --import FILE');
    }
  } else if (options.incremental) {
    throw new PorterError('PORTER_USAGE', '--incremental goes with --source NAME');
  }
  if (!(RESOURCE_NAMES as readonly string[]).includes(options.resource)) {
    throw new PorterError(
      'PORTER_USAGE',
      `--resource of a scheduled import must be one of ${RESOURCE_NAMES.join(', ')}`,
    );
  }
  const read =
    'file' in input
      ? { file: await scheduledFile(input.file), evenUnchanged: options.evenUnchanged === true }
      : { source: { name: input.source, incremental: options.incremental === true } };
  const importOptions = await importOptionsFrom(options.resource as ResourceName, options);
  await withContext(async (context) => {
    const info = await addImportSchedule(context, {
      name,
      cron: options.cron,
      tz: options.tz,
      request: { ...read, options: importOptions },
    });
    console.log(describeImportSchedule(info));
  });
}

/** The absolute path of a scheduled file; it may be missing now, but not a directory. */
async function scheduledFile(file: string): Promise<string> {
  // the system that writes the file may not have yet: only a directory is refused
  const path = resolve(file);
  await checkInputFile(path, '--import').catch((error: unknown) => {
    if (error instanceof PorterError && error.code === 'PORTER_USAGE') throw error;
  });
  return path;
}

/** `porter schedule add | list | remove | history`. */
export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('Scheduled exports and imports, kept in Redis and run by the workers');

  const add = schedule
    .command('add')
    .description(
      'Create or replace a schedule: an export (runs go to OUT/NAME/<run-id>/), or with --import FILE an import of FILE as it is when the schedule fires, or with --source NAME an import of the directory source as it is then',
    )
    .argument('<name>', 'schedule name: letters, digits, "_" and "-"')
    .requiredOption('--cron <pattern>', 'cron pattern, e.g. "0 2 * * *" (6 fields: seconds first)')
    .option('--tz <zone>', 'IANA time zone of the pattern, e.g. Europe/Berlin')
    .requiredOption(
      '--resource <resource>',
      'users, groups, acls or all',
      oneOf('--resource', EXPORT_RESOURCES),
    )
    .option(
      '--format <format>',
      'csv, json, ndjson or bundle',
      oneOf('--format', EXPORT_FORMATS),
      'csv',
    )
    .option('--out <dir>', 'directory of the schedule (default PORTER_EXPORT_DIR)')
    .option(
      '--keep <n>',
      'completed runs to keep; older ones are removed',
      positiveInteger('--keep'),
    )
    .option('--import <file>', 'schedule an import of this file instead of an export')
    .option(
      '--even-unchanged',
      'with --import: import the file even when its content is that of the last run',
    )
    .option(
      '--source <name>',
      'schedule an import of this directory source (PORTER_SOURCES_FILE; docs/sources.md), read whole at each run',
    )
    .option(
      '--incremental',
      'with --source: read only the entries changed since the last read, created or updated',
    );
  const exportOptions = new Set(add.options.map((option) => option.attributeName()));
  addImportOptions(add, { mode: 'optional' });
  // what addImportOptions declared, and --even-unchanged: only an import schedule takes them
  const importOnly = new Set(
    add.options
      .map((option) => option.attributeName())
      .filter((attribute) => !exportOptions.has(attribute)),
  );
  importOnly.add('evenUnchanged');
  importOnly.add('incremental');
  importOnly.delete('import');
  importOnly.delete('source');
  // an export schedule reads a target too
  importOnly.delete('target');
  add.action(async (name: string, options: ScheduleAddOptions, command: Command) => {
    if (options.import !== undefined && options.source !== undefined) {
      throw new PorterError('PORTER_USAGE', 'give --import FILE or --source NAME, not both');
    }
    if (options.import !== undefined) {
      await addImportScheduleCommand(name, { file: options.import }, options, command);
      return;
    }
    if (options.source !== undefined) {
      await addImportScheduleCommand(name, { source: options.source }, options, command);
      return;
    }
    // an import option without --import would be silently dropped: say so instead
    const given = command.options.find(
      (option) =>
        importOnly.has(option.attributeName()) &&
        command.getOptionValueSource(option.attributeName()) === 'cli',
    );
    if (given) {
      throw new PorterError(
        'PORTER_USAGE',
        `${given.long} goes with --import FILE or --source NAME`,
      );
    }
    if (options.out !== undefined) await checkOutputDirectory(options.out, '--out');
    await withContext(async (context) => {
      const info = await addSchedule(context, {
        name,
        cron: options.cron,
        tz: options.tz,
        keep: options.keep,
        resource: options.resource,
        format: options.format,
        outDir: cliOutDir(context, options.out),
        target: options.target,
      });
      console.log(describeSchedule(info));
    });
  });

  schedule
    .command('list')
    .description('List the schedules, soonest first')
    .option('--json', 'print them as JSON')
    .action(async (options: { json?: boolean }) => {
      await withContext(async (context) => {
        const schedules = await listSchedules(context);
        const imports = await listImportSchedules(context);
        if (options.json) console.log(JSON.stringify([...schedules, ...imports], null, 2));
        else if (schedules.length + imports.length === 0) console.error('no schedules');
        else {
          for (const info of schedules) console.log(describeSchedule(info));
          for (const info of imports) console.log(describeImportSchedule(info));
        }
      });
    });

  schedule
    .command('remove')
    .description('Remove a schedule (export or import); its past runs, files and imports stay')
    .argument('<name>', 'schedule name')
    .action(async (name: string) => {
      await withContext(async (context) => {
        if (!(await deleteImportSchedule(context, name))) await deleteSchedule(context, name);
        console.error(`schedule ${name} removed`);
      });
    });

  schedule
    .command('history')
    .description(
      'The last runs of a schedule, newest first: of an import schedule imported, unchanged or failed; of an export schedule its exports',
    )
    .argument('<name>', 'schedule name')
    .option('--limit <n>', 'runs shown', positiveInteger('--limit'), 20)
    .option('--json', 'print them as JSON')
    .action(async (name: string, options: { limit: number; json?: boolean }) => {
      await withContext(async (context) => {
        const runs = await importScheduleRuns(context, name, options.limit);
        // an export schedule's runs are its exports
        const exports =
          runs.length > 0
            ? []
            : (await listExports(context, EXPORTS_SEARCHED))
                .filter((info) => info.schedule?.name === name)
                .slice(0, options.limit);
        if (options.json) console.log(JSON.stringify(runs.length > 0 ? runs : exports, null, 2));
        else if (runs.length + exports.length === 0) console.error(`no runs of ${name}`);
        else {
          for (const run of runs) console.log(describeRun(run));
          for (const info of exports) console.log(describeExportRun(info));
        }
      });
    });
}
