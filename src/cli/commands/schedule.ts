import type { Command } from 'commander';
import { addSchedule, cliOutDir, deleteSchedule, listSchedules } from '../../app/exports.js';
import {
  EXPORT_FORMATS,
  EXPORT_RESOURCES,
  type ExportFormat,
  type ExportResource,
} from '../../export/export-types.js';
import type { ScheduleInfo } from '../../queue/schedules.js';
import { oneOf, positiveInteger } from '../options.js';
import { checkOutputDirectory } from '../paths.js';
import { withContext } from '../with-context.js';

interface ScheduleAddOptions {
  cron: string;
  tz?: string;
  resource: ExportResource;
  format: ExportFormat;
  out?: string;
  keep?: number;
}

/** One line per schedule. */
export function describeSchedule(info: ScheduleInfo): string {
  const { request } = info;
  const tz = info.tz ? ` (${info.tz})` : '';
  const keep = info.keep === undefined ? 'all runs kept' : `keeps ${info.keep}`;
  return (
    `${info.name}  "${info.cron}"${tz}  ${request.resource} as ${request.format} → ` +
    `${request.outDir}/${info.name}/  ${keep}  next ${info.next ?? '-'}`
  );
}

/** `porter schedule add | list | remove`. */
export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('Scheduled exports, kept in Redis and run by the workers');

  schedule
    .command('add')
    .description('Create or replace a schedule; runs go to OUT/NAME/<run-id>/')
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
    .action(async (name: string, options: ScheduleAddOptions) => {
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
        if (options.json) console.log(JSON.stringify(schedules, null, 2));
        else if (schedules.length === 0) console.error('no schedules');
        else for (const info of schedules) console.log(describeSchedule(info));
      });
    });

  schedule
    .command('remove')
    .description('Remove a schedule; its past runs and their files stay')
    .argument('<name>', 'schedule name')
    .action(async (name: string) => {
      await withContext(async (context) => {
        await deleteSchedule(context, name);
        console.error(`schedule ${name} removed`);
      });
    });
}
