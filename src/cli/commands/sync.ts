import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { approveImport, requireImport } from '../../app/imports.js';
import { previewPlan } from '../../app/plan-approval.js';
import { confirmPlan } from '../confirm-plan.js';
import { addImportOptions } from '../import-options.js';
import { oneOf } from '../options.js';
import {
  addReportOptions,
  addWaitOptions,
  checkReportArguments,
  finishQueuedImport,
  willWait,
  type ReportValues,
} from '../queued-work.js';
import { withContext } from '../with-context.js';
import { runImport, type ImportCommandOptions } from './import.js';

type SyncCommandLine = Omit<ImportCommandOptions, 'mode' | 'resource'> & {
  resource: ResourceName;
};

export function registerSyncCommands(program: Command): void {
  const command = program
    .command('sync')
    .description(
      'Make the directory match a file: upsert its records, and lock, delete or ignore those on the server it leaves out (exit 0 done, 2 some records failed, 3 held for approval or a dry run a real run would hold, 1 failed)',
    )
    .argument('<file>', 'CSV, JSON or NDJSON file of every user or group in scope')
    .requiredOption(
      '--resource <resource>',
      'users or groups',
      oneOf(
        '--resource',
        RESOURCE_NAMES.filter((name) => name !== 'acls'),
      ),
    );
  addImportOptions(command, {
    mode: 'none',
    lookup: false,
    allowAdmin: 'let the sync touch users of any type but "General User"',
    dryRun: 'plan only: the changes, locks and deletes it would make; nothing written',
  });
  addReportOptions(
    addWaitOptions(command, 'sync', true),
    'write the per-record report to this file when the sync ends',
  ).action((file: string, options: SyncCommandLine) =>
    runImport(file, { ...options, mode: 'sync', lookup: undefined }, true),
  );

  const approve = program
    .command('approve')
    .description(
      'Write the plan of a held sync as planned: each record only if the server still holds what it was planned against. Prints the counts and the first locks and deletes, then asks (--yes: does not ask)',
    )
    .argument('<id>', 'id of the held sync')
    .option(
      '--yes',
      'approve without asking (needed when not on a terminal); the counts and first locks and deletes are printed all the same',
    );
  addReportOptions(
    addWaitOptions(approve, 'import that writes the plan'),
    'write the per-record report of the import that writes the plan to this file',
  ).action(async (id: string, options: ReportValues & { yes?: boolean }) => {
    willWait(options);
    await checkReportArguments(options);
    await withContext(async (context) => {
      const held = await requireImport(context, id);
      await confirmPlan(await previewPlan(context, held, 'approve'), options.yes === true);
      const info = await approveImport(context, id, (created) => console.log(created.id));
      await finishQueuedImport(context, info, options, {
        queuedText: `queued: the plan of ${id}, written by import ${info.id}`,
      });
    });
  });
}
