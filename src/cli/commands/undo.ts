import type { Command } from 'commander';
import { undoImport } from '../../app/undo.js';
import { previewUndo } from '../../app/undo-preview.js';
import { PorterError } from '../../errors/porter-error.js';
import {
  addReportOptions,
  addWaitOptions,
  checkReportArguments,
  finishQueuedImport,
  willWait,
  type ReportValues,
} from '../queued-work.js';
import { confirmPlan } from '../confirm-plan.js';
import { withContext } from '../with-context.js';

interface UndoCommandOptions extends ReportValues {
  dryRun?: boolean;
  evenChanged?: boolean;
  yes?: boolean;
}

export function registerUndoCommand(program: Command): void {
  const command = program
    .command('undo')
    .description(
      'Turn back what an ended import changed, as a new import: updates restored, creates deleted, deletes re-created (given an approved held sync: the import that wrote its plan)',
    )
    .argument('<id>', 'id of the import to undo')
    .option(
      '--dry-run',
      'plan the undo only: every record gets its planned action; nothing is written',
    )
    .option(
      '--even-changed',
      'also turn back records changed on the admin server since the import (else they fail PORTER_PLAN_STALE)',
    )
    .option(
      '--yes',
      'undo without asking (needed when not on a terminal; --dry-run never asks); the counts, the target and the first deletes and locks are printed all the same',
    );
  addReportOptions(
    addWaitOptions(command, 'undo'),
    'write the per-record report of the undo to this file',
  ).action(async (id: string, options: UndoCommandOptions) => {
    if (options.force && !options.report) {
      // --force once meant --even-changed here: never guess which of the two was meant
      throw new PorterError(
        'PORTER_USAGE',
        '--force only overwrites an output file (with --report FILE); to turn back records changed on the server since the import, use --even-changed',
      );
    }
    willWait(options);
    await checkReportArguments(options);
    await withContext(async (context) => {
      const dryRun = options.dryRun === true;
      if (!dryRun) {
        // a write to the directory, deletes and locks among them: said, and asked, first
        const preview = await previewUndo(context, id);
        if (preview.id !== id) {
          console.error(`${id} was approved and written by import ${preview.id}: undoing that`);
        }
        await confirmPlan(preview, {
          yes: options.yes === true,
          again: `porter undo ${id}${options.evenChanged === true ? ' --even-changed' : ''} --yes`,
        });
      }
      const info = await undoImport(
        context,
        id,
        { dryRun, force: options.evenChanged === true },
        (created) => console.log(created.id),
      );
      if (dryRun && info.undoOf !== id) {
        console.error(`${id} was approved and written by import ${info.undoOf}: undoing that`);
      }
      await finishQueuedImport(context, info, options, {
        queuedText: `queued: the undo of ${info.total} records of ${info.undoOf ?? id}`,
      });
    });
  });
}
