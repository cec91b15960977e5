/**
 * Four eyes: a held sync, or a dry run's plan on a target marked `requireApproval`, is approved
 * (or applied) by another principal than the one who started it: PORTER_APPROVAL_SELF. Held
 * syncs need it unless their target says `requireApproval: false`. Names are compared case-
 * insensitively, and the command line passes it only with an approver's token. The approval is
 * recorded on the plan: who, when, and its counts then.
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

/** Whether two principal names are one principal: `Wally` is `wally` (NFKC, case folded). */
export function samePrincipal(a: string, b: string): boolean {
  return a.normalize('NFKC').toLowerCase() === b.normalize('NFKC').toLowerCase();
}

/** How another principal comes to approve, said in every refusal of four eyes. */
export const SECOND_APPROVER_HINT =
  'an admin gives a second person the approver role (porter tokens create --name NAME --role approver, or a group PORTER_OIDC_ROLE_MAP maps to approver), and that person approves in the console, through the API, or with porter approve|apply ID --token';

/**
 * Throws PORTER_APPROVAL_SELF when the acting principal started a plan that needs four eyes, or
 * acts for the one who did. The command line's own principal (`cli:<user>`, which
 * PORTER_CLI_USER names at will) never passes four eyes: it approves with an approver's token.
 */
export function checkFourEyes(targets: TargetSet, plan: ImportInfo): void {
  const principal = currentPrincipal();
  if (!principal || !needsFourEyes(targets, plan)) return;
  const verb = plan.state === 'held' ? 'approve' : 'apply';
  if (principal.via === 'cli') {
    throw new PorterError(
      'PORTER_APPROVAL_SELF',
      `import ${plan.id} needs four eyes, and the command line cannot tell who runs it: ${verb} it with an approver's token of another person than ${plan.startedBy ?? 'its starter'} (--token, or PORTER_TOKEN); ${SECOND_APPROVER_HINT}`,
      { details: { startedBy: plan.startedBy, onBehalfOf: plan.onBehalfOf, needs: 'token' } },
    );
  }
  // a plan a schedule, watch or retry started is also its adder's or original starter's
  const starters = [plan.startedBy, plan.onBehalfOf].filter((name) => name !== undefined);
  if (starters.some((name) => samePrincipal(name, principal.name))) {
    throw new PorterError(
      'PORTER_APPROVAL_SELF',
      `${principal.name} started import ${plan.id}${plan.startedBy !== undefined && !samePrincipal(plan.startedBy, principal.name) ? ` (through ${plan.startedBy})` : ''}; another principal with the approver role must ${verb} it: ${SECOND_APPROVER_HINT}`,
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
