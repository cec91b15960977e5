/**
 * A principal limited to some targets (a token created with `--targets`) acts on those targets'
 * jobs only: starting one on another target, or touching another target's job, is
 * PORTER_FORBIDDEN, and lists leave other targets' jobs and schedules out.
 */
import { PorterError } from '../errors/porter-error.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import type { Principal } from './principal.js';
import { currentPrincipal } from './acting.js';

/** Whether `principal` may see and act on `target` (undefined: the default target). */
export function targetAllowed(
  target: string | undefined,
  principal: Principal | undefined = currentPrincipal(),
): boolean {
  return !principal?.targets || principal.targets.includes(target ?? DEFAULT_TARGET);
}

/** Throws PORTER_FORBIDDEN when `principal` may not act on `target`. */
export function checkTargetAllowed(
  target: string,
  principal: Principal | undefined = currentPrincipal(),
): void {
  if (!principal?.targets || targetAllowed(target, principal)) return;
  throw new PorterError(
    'PORTER_FORBIDDEN',
    `${principal.name} is limited to target${principal.targets.length === 1 ? '' : 's'} ${principal.targets.join(', ')}, not "${target}"`,
    { details: { target, allowed: principal.targets } },
  );
}

/** The items on targets the principal may see, in their order. */
export function visibleTargets<T>(
  items: readonly T[],
  targetOf: (item: T) => string | undefined,
  principal: Principal | undefined = currentPrincipal(),
): T[] {
  if (!principal?.targets) return [...items];
  return items.filter((item) => targetAllowed(targetOf(item), principal));
}
