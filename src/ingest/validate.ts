/**
 * Record-level checks after coercion: the keys a record needs for its mode, and warnings for
 * values the product may not know (they are sent anyway; the admin guard lives in the planner).
 */
import type { ResourceName } from '../admin/resources.js';
import { emailProblem, MAX_EMAIL_CHARS } from '../admin/email.js';
import { KNOWN_PERMISSIONS, USER_TYPES } from '../admin/schemas.js';
import type { ImportMode } from '../model/import.js';

export interface RecordProblem {
  field: string;
  reason: string;
}

function present(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return typeof value !== 'string' || value.trim() !== '';
}

/**
 * The first missing key, or undefined. Users need `username` and groups `name`; a delete may
 * name the record by id instead (the spec's DELETE takes either). ACLs need `name` and
 * `groupId`, or an `id` to update by.
 */
export function missingKey(
  resource: ResourceName,
  mode: ImportMode,
  record: Readonly<Record<string, unknown>>,
): RecordProblem | undefined {
  switch (resource) {
    case 'users':
      if (present(record.username) || (mode === 'delete' && present(record.userId)))
        return undefined;
      return {
        field: 'username',
        reason: mode === 'delete' ? 'is required (or userId)' : 'is required',
      };
    case 'groups':
      if (present(record.name) || (mode === 'delete' && present(record.id))) return undefined;
      return { field: 'name', reason: mode === 'delete' ? 'is required (or id)' : 'is required' };
    case 'acls': {
      if (present(record.id)) return undefined;
      if (!present(record.name))
        return { field: 'name', reason: 'is required (or id, to update an ACL)' };
      if (!present(record.groupId))
        return { field: 'groupId', reason: 'is required (or id, to update an ACL)' };
      return undefined;
    }
  }
}

/**
 * An email address in plain ASCII that emailProblem accepts: a name of allowed characters, "@",
 * and labels of letters, digits and inner hyphens. Anything else gets the full check.
 */
const PLAIN_EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** A value the admin server refuses, checked before anything is sent: a user's email. */
export function valueProblem(
  resource: ResourceName,
  record: Readonly<Record<string, unknown>>,
): RecordProblem | undefined {
  if (resource !== 'users') return undefined;
  const { email } = record;
  if (typeof email !== 'string' || email === '') return undefined;
  if (email.length <= MAX_EMAIL_CHARS && PLAIN_EMAIL.test(email)) return undefined;
  const problem = emailProblem(email);
  return problem === undefined
    ? undefined
    : { field: 'email', reason: `is not an email address: it ${problem}` };
}

const USER_TYPE_SET: ReadonlySet<string> = new Set(USER_TYPES);

/** Warnings about values outside what the product is known to accept; undefined when none. */
export function recordWarnings(
  resource: ResourceName,
  record: Readonly<Record<string, unknown>>,
): string[] | undefined {
  let warnings: string[] | undefined;
  if (resource === 'acls' && Array.isArray(record.revokedPermissions)) {
    const unknown = record.revokedPermissions.filter(
      (name): name is string => typeof name === 'string' && !KNOWN_PERMISSIONS.has(name),
    );
    if (unknown.length > 0) {
      (warnings ??= []).push(
        `revokedPermissions: ${unknown.map((name) => `"${name}"`).join(', ')} ${unknown.length > 1 ? 'are' : 'is'} ` +
          'not a known permission name; sent as given',
      );
    }
  }
  if (resource === 'users' && typeof record.type === 'string' && !USER_TYPE_SET.has(record.type)) {
    (warnings ??= []).push(
      `type: "${record.type}" is not a known user type (${USER_TYPES.join(', ')}); sent as given`,
    );
  }
  return warnings;
}
