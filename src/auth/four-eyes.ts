/**
 * Four eyes: a held sync, or a dry run's plan on a target marked `requireApproval`, is approved
 * (or applied) by another principal than the one who started it: PORTER_APPROVAL_SELF. Held
 * syncs need it unless their target says `requireApproval: false`. The approval is recorded on
 * the plan: who, when, and its counts then.
 */
import type { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import type { ApprovalInfo, ImportInfo } from '../model/import.js';
import type { TargetSet } from '../targets/targets.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import { currentPrincipal } from './acting.js';

/** Whether the plan needs a second principal to approve or apply it. */
export function needsFourEyes(targets: TargetSet, plan: ImportInfo): boolean {
  const name = plan.options.target ?? DEFAULT_TARGET;
  const setting = targets.get(name)?.summary.requireApproval;
  if (plan.state === 'held') return setting !== false;
  return setting === true;
}

/** Throws PORTER_APPROVAL_SELF when the acting principal started a plan that needs four eyes. */
export function checkFourEyes(targets: TargetSet, plan: ImportInfo): void {
  const principal = currentPrincipal();
  if (!principal || !needsFourEyes(targets, plan)) return;
  // a plan a schedule or watch started is its adder's: they do not approve it either
  const starters = [plan.startedBy, plan.onBehalfOf].filter((name) => name !== undefined);
  if (starters.includes(principal.name)) {
    throw new PorterError(
      'PORTER_APPROVAL_SELF',
      `${principal.name} started import ${plan.id}${plan.startedBy !== principal.name ? ` (through ${plan.startedBy})` : ''}; another principal with the approver role must ${plan.state === 'held' ? 'approve' : 'apply'} it`,
      { details: { startedBy: plan.startedBy, onBehalfOf: plan.onBehalfOf } },
    );
  }
}

/** Records who approved the plan, when, and its counts at that moment, on the plan's meta. */
export async function recordApproval(
  redis: Redis,
  metaKey: string,
  plan: ImportInfo,
  applicationId?: string,
): Promise<ApprovalInfo> {
  const approval: ApprovalInfo = {
    by: currentPrincipal()?.name ?? 'unknown',
    at: new Date().toISOString(),
    ...(applicationId ? { applicationId } : {}),
    counts: plan.counts,
    actions: plan.actions,
  };
  await redis.hset(metaKey, 'approval', JSON.stringify(approval));
  return approval;
}
