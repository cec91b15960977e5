import type { Command } from 'commander';
import { noteEnded } from '../../auth/acting.js';
import { cliOutDir, exportWorkersRunning, requireExport, startExport } from '../../app/exports.js';
import {
  EXPORT_FORMATS,
  EXPORT_RESOURCES,
  type ExportFormat,
  type ExportResource,
} from '../../export/export-types.js';
import { followExport, summarizeExport } from '../export-progress.js';
import { addTargetOption, oneOf } from '../options.js';
import { checkOutputDirectory } from '../paths.js';
import { withContext } from '../with-context.js';
import { addWaitOptions, willWait } from '../queued-work.js';

interface ExportCommandOptions {
  resource: ExportResource;
  format: ExportFormat;
  out?: string;
  wait?: boolean;
  target?: string;
}

/** `porter export`. */
export function registerExportCommand(program: Command): void {
  const command = program.command('export');
  addTargetOption(command, 'the target (named admin server) to read');
  command
    .description(
      'Export every user, group or ACL to files (a worker writes them; see docs/exports.md)',
    )
    .requiredOption(
      '--resource <resource>',
      'users, groups, acls or all',
      oneOf('--resource', EXPORT_RESOURCES),
    )
    .option(
      '--format <format>',
      'csv, json, ndjson or bundle (all three in one JSON document)',
      oneOf('--format', EXPORT_FORMATS),
      'csv',
    )
    .option(
      '--out <dir>',
      'directory the run directory is made in (default PORTER_EXPORT_DIR); each run writes a new directory',
    );
  addWaitOptions(command, 'export').action(async (options: ExportCommandOptions) => {
    if (options.out !== undefined) await checkOutputDirectory(options.out, '--out');
    await withContext(async (context) => {
      const info = await startExport(context, {
        resource: options.resource,
        format: options.format,
        outDir: cliOutDir(context, options.out),
        target: options.target,
      });
      console.log(info.id);
      if (!willWait(options)) {
        console.error(
          `queued; the files will be in ${info.dir}; follow with: porter status ${info.id} --follow`,
        );
        return;
      }
      const final = await followExport({
        read: () => requireExport(context, info.id),
        redis: context.redisWatch,
        stuckHint: async () =>
          (await exportWorkersRunning(context))
            ? undefined
            : 'no worker is running: start one with `npx porter worker`',
      });
      console.error(summarizeExport(final));
      noteEnded({ id: final.id, state: final.state });
      process.exitCode = final.state === 'completed' ? 0 : 1;
    });
  });
}
