import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { approveImport } from '../../app/imports.js';
import { addImportOptions } from '../import-options.js';
import { oneOf } from '../options.js';
import { registerPlanCommand } from '../plan-command.js';
import { addReportOptions, addWaitOptions } from '../queued-work.js';
import { runImport } from '../import-run.js';
import type { ImportCommandOptions } from '../import-run.js';
import { addSourceOptions } from './import.js';

type SyncCommandLine = Omit<ImportCommandOptions, 'mode' | 'resource'> & {
  resource: ResourceName;
};

export function registerSyncCommands(program: Command): void {
  const command = program
    .command('sync')
    .description(
      'Make the directory match a file: upsert its records, and lock, delete or ignore those on the server it leaves out (exit 0 done, 2 some records failed, 3 held for approval or a dry run a real run would hold, 1 failed)',
    )
    .argument('[file]', 'CSV, JSON or NDJSON file of every user or group in scope (or --source)')
    .requiredOption(
      '--resource <resource>',
      'users or groups',
      oneOf(
        '--resource',
        RESOURCE_NAMES.filter((name) => name !== 'acls'),
      ),
    );
  addSourceOptions(command);
  addImportOptions(command, {
    mode: 'none',
    lookup: false,
    stream: false,
    allowAdmin: 'let the sync touch users of any type but "General User"',
    dryRun: 'plan only: the changes, locks and deletes it would make; nothing written',
  });
  addReportOptions(
    addWaitOptions(command, 'sync', true),
    'write the per-record report to this file when the sync ends',
  ).action((file: string | undefined, options: SyncCommandLine) =>
    runImport(file, { ...options, mode: 'sync', lookup: undefined }, true),
  );

  registerPlanCommand(program, {
    name: 'approve',
    description:
      'Write the plan of a held sync as planned: each record only if the server still holds what it was planned against. Prints the counts and the first locks and deletes, then asks (--yes: does not ask)',
    idText: 'the held sync',
    yesText: 'approve without asking',
    writer: 'import that writes the plan',
    write: (context, id, onCreated) => approveImport(context, id, onCreated),
    queuedText: (id, info) => `queued: the plan of ${id}, written by import ${info.id}`,
  });
}
