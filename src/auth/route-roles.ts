/**
 * The role each HTTP route needs, and the audit action it writes. Reads need `viewer`; every
 * route that changes state is listed here, and one that is not needs `admin` (a new route is
 * closed until it is placed). test/auth/route-roles.test.ts checks every route of the API
 * against this table.
 */
import type { Role } from './roles.js';

export interface RouteRule {
  role: Role;
  /** The audit action of a state-changing route. */
  action?: string;
}

const RULES: Readonly<Record<string, RouteRule>> = {
  'POST /v1/imports': { role: 'operator', action: 'import.start' },
  'DELETE /v1/imports/:id': { role: 'operator', action: 'import.cancel' },
  'POST /v1/imports/:id/resume': { role: 'operator', action: 'import.resume' },
  'POST /v1/imports/:id/retry': { role: 'operator', action: 'import.retry' },
  'POST /v1/imports/:id/undo': { role: 'operator', action: 'import.undo' },
  'POST /v1/imports/:id/apply': { role: 'approver', action: 'import.apply' },
  'POST /v1/imports/:id/approve': { role: 'approver', action: 'import.approve' },
  'POST /v1/exports': { role: 'operator', action: 'export.start' },
  'POST /v1/migrations': { role: 'operator', action: 'migration.start' },
  // a preview reads a file and the target, and changes nothing; it is the first step of an import
  'POST /v1/previews': { role: 'operator' },
  'POST /v1/schedules': { role: 'admin', action: 'schedule.add' },
  'DELETE /v1/schedules/:name': { role: 'admin', action: 'schedule.remove' },
  'DELETE /v1/import-schedules/:name': { role: 'admin', action: 'schedule.remove' },
  'GET /v1/audit': { role: 'admin' },
  'POST /v1/session/logout': { role: 'viewer', action: 'signout' },
  'POST /queues/logout': { role: 'viewer', action: 'signout' },
};

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The rule of a route, by method and its URL pattern (`/v1/imports/:id`). */
export function routeRule(method: string, url: string): RouteRule {
  const listed = RULES[`${method} ${url}`];
  if (listed) return listed;
  if (READS.has(method)) return { role: 'viewer' };
  // the queue dashboard's buttons (retry, remove, clean, pause a queue): raw queue changes
  if (url.startsWith('/queues/')) return { role: 'admin', action: 'queues.change' };
  return { role: 'admin', action: 'unlisted' };
}

/** The state-changing routes this table names, for tests and docs. */
export function listedRoutes(): ReadonlyArray<[string, RouteRule]> {
  return Object.entries(RULES);
}
