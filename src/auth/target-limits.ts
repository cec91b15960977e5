/**
 * A principal limited to some targets (a token created with `--targets`) acts on those targets'
 * jobs only: starting one on another target, or touching another target's job, is
 * PORTER_FORBIDDEN.
 */
import { PorterError } from '../errors/porter-error.js';
import type { Principal } from './principal.js';
import { currentPrincipal } from './acting.js';

/** Throws PORTER_FORBIDDEN when `principal` may not act on `target`. */
export function checkTargetAllowed(
  target: string,
  principal: Principal | undefined = currentPrincipal(),
): void {
  if (!principal?.targets || principal.targets.includes(target)) return;
  throw new PorterError(
    'PORTER_FORBIDDEN',
    `${principal.name} is limited to target${principal.targets.length === 1 ? '' : 's'} ${principal.targets.join(', ')}, not "${target}"`,
    { details: { target, allowed: principal.targets } },
  );
}
