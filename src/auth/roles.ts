/**
 * The four roles, cumulative: each may do what the roles before it may. A viewer reads and
 * reports; an operator also starts imports, exports, syncs, dry runs, migrations and undos, and
 * cancels, resumes and retries them; an approver also approves held syncs and applies plans; an
 * admin also manages schedules, watch folders, tokens and the raw queue dashboard.
 */
import { PorterError } from '../errors/porter-error.js';

export const ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** The role named, or PORTER_USAGE naming the four. */
export function parseRole(value: string, what = '--role'): Role {
  if (isRole(value)) return value;
  throw new PorterError('PORTER_USAGE', `${what}: one of ${ROLES.join(', ')}, not "${value}"`);
}

/** Whether `held` includes `needed` (roles are cumulative). */
export function roleIncludes(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}
