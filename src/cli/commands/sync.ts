import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { approveImport, requireImport } from '../../app/imports.js';
import { previewPlan } from '../../app/plan-approval.js';
import { confirmPlan } from '../confirm-plan.js';
import { addImportOptions, addReportOptions } from '../import-options.js';
import { oneOf } from '../options.js';
import { describeActions, followImport, summarize } from '../progress.js';
import { describeSync } from '../sync.js';
import { withContext } from '../with-context.js';
import { importExitCode, runImport, type ImportCommandOptions } from './import.js';

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
    command.option('--no-wait', 'print the id and return at once instead of following the sync'),
    'write the per-record report to this file when the sync ends',
  ).action((file: string, options: SyncCommandLine) =>
    runImport(file, { ...options, mode: 'sync', lookup: undefined }),
  );

  program
    .command('approve')
    .description(
      'Write the plan of a held sync as planned: each record only if the server still holds what it was planned against. Prints the counts and the first locks and deletes, then asks (--yes: does not ask)',
    )
    .argument('<id>', 'id of the held sync')
    .option('--wait', 'follow the new import until it ends, then summarize')
    .option(
      '--yes',
      'approve without asking (needed when not on a terminal); the counts and first locks and deletes are printed all the same',
    )
    .action(async (id: string, options: { wait?: boolean; yes?: boolean }) => {
      await withContext(async (context) => {
        const held = await requireImport(context, id);
        await confirmPlan(await previewPlan(context, held, 'approve'), options.yes === true);
        const info = await approveImport(context, id, (created) => console.log(created.id));
        if (!options.wait) {
          console.error(`queued: the plan of ${id}; follow with: porter status ${info.id}`);
          return;
        }
        const final = await followImport({ read: () => context.store.get(info.id) });
        console.error(summarize(final));
        const actions = describeActions(final);
        if (actions) console.error(actions);
        if (final.sync) console.error(describeSync(final));
        process.exitCode = importExitCode(final);
      });
    });
}
