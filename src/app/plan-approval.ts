/**
 * What approving a held sync or applying a dry run will write, said before it is written: the
 * counts of writes (removals first), and the records that delete or lock. The operator confirms
 * by naming the counts ("lock 59, update 171"): the console and the CLI always ask, and the HTTP
 * API checks a `confirm` it is given against the plan.
 */
import { checkTargetAllowed } from '../auth/target-limits.js';
import { PorterError } from '../errors/porter-error.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import type { ImportInfo, RecordAction, RecordResult } from '../model/import.js';
import type { PorterContext } from './context.js';
import { targetShown, type WritePreview } from './write-preview.js';

/** How a plan is carried out: a held sync is approved, a finished dry run applied. */
export type PlanCommand = 'approve' | 'apply';

/** The actions that write, the ones that remove or lock first. */
export const WRITE_ACTIONS = [
  'delete',
  'lock',
  'create',
  'update',
  'adopt',
  'rename',
  'reactivate',
] as const;

/** Actions that take something away from the directory: shown before any other. */
export const REMOVAL_ACTIONS: readonly RecordAction[] = ['delete', 'lock'];

/** Removal records a preview lists at most by default. */
export const PREVIEW_REMOVALS = 20;

/** The first removals are in input order (a sync's server-only rows come after the file's). */
export interface PlanPreview extends WritePreview {
  command: PlanCommand;
  /** Records the plan writes, per action, removals first; actions with none left out. */
  writes: Array<{ action: (typeof WRITE_ACTIONS)[number]; records: number }>;
}

/** Refuses (PORTER_CONFLICT) an import that is not a held sync. */
export function requireHeld(plan: ImportInfo): void {
  if (plan.state !== 'held' || !plan.settled) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${plan.id} is ${plan.state}, not a held sync; nothing to approve`,
    );
  }
}

/** Refuses (PORTER_CONFLICT) an import that is not a dry run ended with a plan. */
export function requireAppliable(plan: ImportInfo): void {
  if (!plan.options.dryRun) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${plan.id} is not a dry run; nothing to apply`,
    );
  }
  if (!plan.settled) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `dry run ${plan.id} is still ${plan.state}; apply it once it has ended`,
    );
  }
  if (plan.state === 'failed' || plan.state === 'cancelled') {
    throw new PorterError(
      'PORTER_CONFLICT',
      `dry run ${plan.id} ended ${plan.state}; no plan to apply`,
    );
  }
}

/** The writes of a plan, removals first. */
export function planWrites(plan: ImportInfo): PlanPreview['writes'] {
  return WRITE_ACTIONS.map((action) => ({ action, records: plan.actions[action] ?? 0 })).filter(
    (write) => write.records > 0,
  );
}

/** "lock 59, update 171": what the operator names to confirm ("nothing" for a plan with no write). */
export function confirmationText(plan: ImportInfo): string {
  const writes = planWrites(plan);
  if (writes.length === 0) return 'nothing';
  return writes.map((write) => `${write.action} ${write.records}`).join(', ');
}

function normalized(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/\s*,\s*/g, ', ')
    .replace(/\s+/g, ' ');
}

/** Refuses (PORTER_CONFLICT) a confirmation that does not name the plan's counts. */
export function checkConfirmation(plan: ImportInfo, command: PlanCommand, given: string): void {
  const expected = confirmationText(plan);
  if (normalized(given) === normalized(expected)) return;
  throw new PorterError(
    'PORTER_CONFLICT',
    `the plan of ${plan.id} writes ${expected}, not "${given}"; nothing was ${command === 'approve' ? 'approved' : 'applied'}. Read the plan again (its locks and deletes first) and confirm with "${expected}"`,
  );
}

/** The plan's counts and its first removals, after checking it can be carried out by `command`. */
export async function previewPlan(
  context: PorterContext,
  plan: ImportInfo,
  command: PlanCommand,
  limit = PREVIEW_REMOVALS,
): Promise<PlanPreview> {
  // a token limited to other targets reads nothing of this plan
  const target = plan.options.target ?? DEFAULT_TARGET;
  checkTargetAllowed(target);
  if (command === 'approve') requireHeld(plan);
  else requireAppliable(plan);
  const removals = REMOVAL_ACTIONS.reduce((sum, action) => sum + (plan.actions[action] ?? 0), 0);
  const firstRemovals: RecordResult[] = [];
  if (removals > 0 && limit > 0) {
    for await (const result of context.store.results(plan.id, { status: ['planned'] })) {
      if (result.action === undefined || !REMOVAL_ACTIONS.includes(result.action)) continue;
      firstRemovals.push(result);
      if (firstRemovals.length === Math.min(limit, removals)) break;
    }
  }
  return {
    id: plan.id,
    command,
    writes: planWrites(plan),
    confirm: confirmationText(plan),
    removals,
    firstRemovals,
    target: targetShown(context, target),
  };
}
