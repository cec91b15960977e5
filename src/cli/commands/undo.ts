import type { Command } from 'commander';
import { undoImport } from '../../app/undo.js';
import { describeActions, followImport, summarize } from '../progress.js';
import { importExitCode } from './import.js';
import { withContext } from '../with-context.js';

export function registerUndoCommand(program: Command): void {
  program
    .command('undo')
    .description(
      'Turn back what an ended import changed, as a new import: updates restored, creates deleted, deletes re-created',
    )
    .argument('<id>', 'id of the import to undo')
    .option(
      '--dry-run',
      'plan the undo only: every record gets its planned action; nothing is written',
    )
    .option('--force', 'also turn back records changed on the admin server since the import')
    .option('--wait', 'follow the new import until it ends, then summarize')
    .action(async (id: string, options: { dryRun?: boolean; force?: boolean; wait?: boolean }) => {
      await withContext(async (context) => {
        const info = await undoImport(
          context,
          id,
          { dryRun: options.dryRun === true, force: options.force === true },
          (created) => console.log(created.id),
        );
        if (!options.wait) {
          console.error(
            `queued: the undo of ${info.total} records of ${id}; follow with: porter status ${info.id}`,
          );
          return;
        }
        const final = await followImport({ read: () => context.store.get(info.id) });
        console.error(summarize(final));
        const actions = describeActions(final);
        if (actions) console.error(actions);
        process.exitCode = importExitCode(final);
      });
    });
}
