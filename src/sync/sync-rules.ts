/**
 * What a sync may touch. One set of rules, asked both when a sync's preparation counts its
 * locks and deletes against the threshold and when each record is planned, so the count and
 * the plan always agree.
 */
import type { ResourceName } from '../admin/resources.js';
import type { MissingAction, SyncOptions } from '../model/import.js';
import { isOrdinaryType } from '../plan/admin-guard.js';

export interface SyncRules {
  resource: ResourceName;
  missing: MissingAction;
  allowAdmin: boolean;
  /** Keys never touched (--protect). */
  protect: ReadonlySet<string>;
  /** The username porter signs in as (ADMIN_USER): never touched. */
  selfUser?: string;
}

export function syncRules(
  resource: ResourceName,
  options: SyncOptions,
  allowAdmin: boolean,
  selfUser: string | undefined,
): SyncRules {
  return {
    resource,
    missing: options.missing,
    allowAdmin,
    protect: new Set(options.protect ?? []),
    selfUser: resource === 'users' ? selfUser : undefined,
  };
}

/**
 * Why a sync must leave this record alone, or undefined when it may write it: a protected key,
 * porter's own account, or (users, without --allow-admin) a user of any type but "General User".
 */
export function sparedBecause(
  rules: SyncRules,
  key: string,
  current: Record<string, unknown> | undefined,
): string | undefined {
  if (rules.protect.has(key)) return 'protected (--protect): a sync never touches it';
  if (rules.resource !== 'users') return undefined;
  if (rules.selfUser !== undefined && key === rules.selfUser) {
    return 'the account porter signs in as (ADMIN_USER): a sync never touches it';
  }
  if (!rules.allowAdmin && current !== undefined && !isOrdinaryType(current.type)) {
    const type = typeof current.type === 'string' ? `"${current.type}"` : 'no type';
    return `an administrator (type ${type}): a sync never touches it without --allow-admin`;
  }
  return undefined;
}

/** What a sync does with one server record its file leaves out. */
export type MissingDecision =
  | { kind: 'lock' | 'delete' }
  /** Left alone, with the reason (reported `skipped`). */
  | { kind: 'spared'; action: 'lock' | 'delete'; reason: string };

/**
 * Decides a record the file leaves out. `lookalikeOf` is the file's key that looks like this
 * one (case, width, look-alike letters): most likely the same account spelt otherwise, so it
 * is left alone and reported.
 */
export function decideMissing(
  rules: SyncRules,
  key: string,
  current: Record<string, unknown>,
  lookalikeOf?: string,
): MissingDecision {
  const action = rules.missing === 'delete' ? 'delete' : 'lock';
  const spared = sparedBecause(rules, key, current);
  if (spared) return { kind: 'spared', action, reason: `not in the file, but ${spared}` };
  if (lookalikeOf !== undefined) {
    return {
      kind: 'spared',
      action,
      reason: `not in the file, but the file's ${JSON.stringify(lookalikeOf)} looks like it (case, width or look-alike letters); left alone`,
    };
  }
  if (action === 'lock' && current.status === LOCKED) {
    return { kind: 'spared', action, reason: 'not in the file; already locked' };
  }
  return { kind: action };
}

export const LOCKED = 'Locked';
export const ACTIVE = 'Active';
