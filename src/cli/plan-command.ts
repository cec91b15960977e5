/**
 * `porter apply` and `porter approve`: both write a plan that another import made. Each says
 * what the plan writes and asks (or needs --yes), then queues the writing import and, as every
 * command that queues work, follows it with --wait or --report. Where four eyes apply, it acts
 * as an approver's token (`--token`, PORTER_TOKEN; token-principal.ts).
 */
import type { Command } from 'commander';
import type { PorterContext } from '../app/context.js';
import { requireImport } from '../app/imports.js';
import { previewPlan, type PlanCommand } from '../app/plan-approval.js';
import type { ImportInfo } from '../model/import.js';
import { confirmPlan } from './confirm-plan.js';
import {
  addReportOptions,
  addWaitOptions,
  checkReportArguments,
  finishQueuedImport,
  willWait,
  type ReportValues,
} from './queued-work.js';
import { withContext } from './with-context.js';

export interface PlanCommandSpec {
  name: PlanCommand;
  description: string;
  /** What the id names, e.g. "the dry run". */
  idText: string;
  /** What --yes skips asking, e.g. "apply without asking". */
  yesText: string;
  /** The import that writes the plan, as --wait and --report name it. */
  writer: string;
  /** Queues the writing import. */
  write: (
    context: PorterContext,
    id: string,
    onCreated: (info: ImportInfo) => void,
  ) => Promise<ImportInfo>;
  queuedText: (id: string, info: ImportInfo) => string;
}

export function registerPlanCommand(program: Command, spec: PlanCommandSpec): void {
  const command = program
    .command(spec.name)
    .description(spec.description)
    .argument('<id>', `id of ${spec.idText}`)
    .option(
      '--yes',
      `${spec.yesText} (needed when not on a terminal); the counts and first deletes and locks are printed all the same`,
    )
    .option(
      '--token <token>',
      `act as this approver's API token (default: PORTER_TOKEN, which keeps it out of the process list); needed where four eyes apply: the command line's own user never passes them`,
    );
  addReportOptions(
    addWaitOptions(command, spec.writer),
    `write the per-record report of the ${spec.writer} to this file`,
  ).action(async (id: string, options: ReportValues & { yes?: boolean; token?: string }) => {
    willWait(options);
    await checkReportArguments(options);
    await withContext(async (context) => {
      const plan = await requireImport(context, id);
      await confirmPlan(await previewPlan(context, plan, spec.name), {
        yes: options.yes === true,
      });
      const info = await spec.write(context, id, (created) => console.log(created.id));
      await finishQueuedImport(context, info, options, { queuedText: spec.queuedText(id, info) });
    });
  });
}
