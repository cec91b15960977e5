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
  /**
   * The route shows every target's jobs or events at once, and cannot leave some out: a
   * principal limited to some targets (a token's `--targets`) is refused it.
   */
  everyTarget?: boolean;
  /**
   * `refusals`: the audit hooks write only a refused attempt; the route writes its own event
   * when it acts (a sign-out writes one only when a session ended).
   */
  audit?: 'refusals';
}

const RULES: Readonly<Record<string, RouteRule>> = {
  'POST /v1/imports': { role: 'operator', action: 'import.start' },
  // reads the source, then starts an import as an upload does
  'POST /v1/source-imports': { role: 'operator', action: 'import.start' },
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
  'GET /v1/audit': { role: 'admin', everyTarget: true },
  'POST /v1/notify/channels/:name/test': { role: 'operator', action: 'notify.send-test' },
  'GET /v1/notify/deliveries': { role: 'viewer', everyTarget: true },
  'GET /v1/notify/deliveries/:id': { role: 'viewer', everyTarget: true },
  'POST /v1/notify/deliveries/:id/redeliver': {
    role: 'operator',
    action: 'notify.redeliver',
    everyTarget: true,
  },
  // SCIM (docs/scim.md): an identity provider's token is an operator limited to its targets
  'POST /scim/v2/:target/Users': { role: 'operator', action: 'scim.user.create' },
  'PUT /scim/v2/:target/Users/:id': { role: 'operator', action: 'scim.user.replace' },
  'PATCH /scim/v2/:target/Users/:id': { role: 'operator', action: 'scim.user.patch' },
  'DELETE /scim/v2/:target/Users/:id': { role: 'operator', action: 'scim.user.delete' },
  'POST /scim/v2/:target/Groups': { role: 'operator', action: 'scim.group.create' },
  'PUT /scim/v2/:target/Groups/:id': { role: 'operator', action: 'scim.group.replace' },
  'PATCH /scim/v2/:target/Groups/:id': { role: 'operator', action: 'scim.group.patch' },
  'DELETE /scim/v2/:target/Groups/:id': { role: 'operator', action: 'scim.group.delete' },
  'POST /scim/v2/:target/Bulk': { role: 'operator', action: 'scim.bulk' },
  'POST /v1/session/logout': { role: 'viewer', action: 'signout', audit: 'refusals' },
  'POST /queues/logout': { role: 'viewer', action: 'signout', audit: 'refusals' },
};

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Where the queue dashboard lives: every queue, every target's jobs, their data and failures. */
const BOARD = /^\/queues(\/|$)/;

/** The rule of a route, by method and its URL pattern (`/v1/imports/:id`). */
export function routeRule(method: string, url: string): RouteRule {
  // HEAD answers what GET does, its length included: it needs what GET needs
  const asked = method === 'HEAD' ? 'GET' : method;
  const listed = RULES[`${asked} ${url}`];
  if (listed) return listed;
  const board = BOARD.test(url) ? { everyTarget: true } : {};
  if (READS.has(asked)) return { role: 'viewer', ...board };
  // the queue dashboard's buttons (retry, remove, clean, pause a queue): raw queue changes
  if (url.startsWith('/queues/')) return { role: 'admin', action: 'queues.change', ...board };
  return { role: 'admin', action: 'unlisted' };
}

/** The state-changing routes this table names, for tests and docs. */
export function listedRoutes(): ReadonlyArray<[string, RouteRule]> {
  return Object.entries(RULES);
}
