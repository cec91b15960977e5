/**
 * A sync's options, checked once when it is submitted: defaults per resource, the deletion
 * threshold, the protected keys and the scope. What is refused here is refused before an
 * import is stored.
 */
import type { ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import { keyTextProblem } from '../ingest/canonical-key.js';
import { exponentialRisk } from '../util/regex-risk.js';
import {
  MISSING_ACTIONS,
  type ImportOptions,
  type MissingAction,
  type SyncOptions,
} from '../model/import.js';

/** The default threshold: at most this many locks and deletes … */
export const DEFAULT_MAX_DELETES = 500;
/** … and at most this share of the in-scope server records, whichever is smaller. */
export const DEFAULT_MAX_DELETES_SHARE = 0.1;
/** Longest `--scope-match` pattern. */
export const MAX_SCOPE_PATTERN_CHARS = 200;
/** Keys longer than this are never tested against the pattern, and so never in its scope. */
export const MAX_SCOPE_KEY_CHARS = 256;
/** Most protected keys, and the longest one. */
export const MAX_PROTECTED_KEYS = 10_000;
const MAX_PROTECTED_KEY_CHARS = 256;

const usage = (message: string): PorterError => new PorterError('PORTER_USAGE', message);

/** The default of `--missing`: users are locked (reversible), groups left alone. */
export function defaultMissing(resource: ResourceName): MissingAction {
  return resource === 'users' ? 'lock' : 'ignore';
}

/** What a caller may give; every field optional. */
export interface SyncOptionsInput {
  missing?: string;
  maxDeletes?: string;
  protect?: readonly string[];
  scopeGroup?: string;
  scopeMatch?: string;
}

/** Checks and completes a sync's options for a resource; throws PORTER_USAGE naming the option. */
export function checkSyncOptions(resource: ResourceName, input: SyncOptionsInput): SyncOptions {
  if (resource === 'acls') {
    throw usage('a sync works on users or groups; ACLs cannot be deleted through the interface');
  }
  const missing = (input.missing ?? defaultMissing(resource)) as MissingAction;
  if (!MISSING_ACTIONS.includes(missing)) {
    throw usage(`missing: must be one of ${MISSING_ACTIONS.join(', ')}`);
  }
  if (resource === 'groups' && missing === 'lock') {
    throw usage('missing: groups cannot be locked; use delete or ignore');
  }
  const options: SyncOptions = { missing };
  if (input.maxDeletes !== undefined) {
    parseMaxDeletes(input.maxDeletes);
    options.maxDeletes = input.maxDeletes.trim();
  }
  if (input.protect !== undefined && input.protect.length > 0) {
    options.protect = checkProtected(input.protect);
  }
  if (input.scopeGroup !== undefined && input.scopeGroup !== '') {
    if (resource !== 'users') throw usage('scope group: only users are members of groups');
    const problem = keyTextProblem(input.scopeGroup);
    if (problem) throw usage(`scope group: the name ${problem}`);
    options.scopeGroup = input.scopeGroup;
  }
  if (input.scopeMatch !== undefined && input.scopeMatch !== '') {
    compileScopePattern(input.scopeMatch);
    options.scopeMatch = input.scopeMatch;
  }
  return options;
}

/** "N" or "N%": a whole number of records or a share of the in-scope ones. */
export function parseMaxDeletes(text: string): { count?: number; percent?: number } {
  const match = /^(\d{1,9})(%?)$/.exec(text.trim());
  if (!match) throw usage(`max deletes: "${text}" is not a whole number or a percentage like 5%`);
  const value = Number(match[1]);
  if (match[2] === '%') {
    if (value > 100) throw usage('max deletes: a percentage is at most 100%');
    return { percent: value };
  }
  return { count: value };
}

/** Most locks and deletes a sync may make without approval, given the in-scope server records. */
export function deletionThreshold(maxDeletes: string | undefined, inScope: number): number {
  if (maxDeletes === undefined) {
    return Math.min(DEFAULT_MAX_DELETES, Math.floor(inScope * DEFAULT_MAX_DELETES_SHARE));
  }
  const { count, percent } = parseMaxDeletes(maxDeletes);
  return count ?? Math.floor((inScope * percent!) / 100);
}

/** Whether a sync's locks and deletes pass its threshold: a real run is held, a dry run says so. */
export function overThreshold(plan: {
  locks: number;
  deletes: number;
  threshold: number;
}): boolean {
  return plan.locks + plan.deletes > plan.threshold;
}

/**
 * Why a sync must plan only and wait for approval (none: it may write): its locks and deletes
 * pass the threshold, or it would lock or delete while rows of its file that failed name no key
 * (any of those rows may be the person it would lock).
 */
export function holdReasons(plan: {
  locks: number;
  deletes: number;
  threshold: number;
  unnamed?: number;
  sourceEmptied?: number;
}): string[] {
  const reasons: string[] = [];
  if (overThreshold(plan)) reasons.push('the plan passes the threshold');
  if ((plan.sourceEmptied ?? 0) > 0) {
    reasons.push(
      `the directory returned no entry where its last full read saw ${plan.sourceEmptied}`,
    );
  }
  const unnamed = plan.unnamed ?? 0;
  if (unnamed > 0 && plan.locks + plan.deletes > 0) {
    reasons.push(
      `${unnamed} row${unnamed === 1 ? '' : 's'} of the file failed without a key that can be ` +
        `read, and any of them may name one of the ${plan.locks + plan.deletes} records the ` +
        'sync would lock or delete',
    );
  }
  return reasons;
}

/** The protected keys, one per line of a file: blank lines and lines starting with # are skipped. */
export function parseProtectedText(text: string): string[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.replace(/\r$/, ''));
}

function checkProtected(keys: readonly string[]): string[] {
  if (keys.length > MAX_PROTECTED_KEYS) {
    throw usage(`protect: at most ${MAX_PROTECTED_KEYS} keys`);
  }
  keys.forEach((key, index) => {
    // keys are compared exactly, as the server stores them: a key it could not hold is a typo
    const problem =
      key.length > MAX_PROTECTED_KEY_CHARS
        ? `is longer than ${MAX_PROTECTED_KEY_CHARS} characters`
        : keyTextProblem(key);
    if (problem) throw usage(`protect: line ${index + 1}: the key ${problem}`);
  });
  return [...new Set(keys)];
}

/**
 * Compiles `--scope-match`. The pattern is bounded in length and refused when it can take
 * exponential time: a repeated group that itself repeats or alternates (`(a+)+`, `(a|aa)*`),
 * or a back-reference. Keys are tested only up to MAX_SCOPE_KEY_CHARS characters.
 */
export function compileScopePattern(pattern: string): RegExp {
  if (pattern.length > MAX_SCOPE_PATTERN_CHARS) {
    throw usage(`scope match: the pattern is longer than ${MAX_SCOPE_PATTERN_CHARS} characters`);
  }
  const risk = exponentialRisk(pattern);
  if (risk !== undefined) throw usage(`scope match: ${risk}`);
  try {
    return new RegExp(pattern, 'u');
  } catch (error) {
    // `*@example.com` is a wildcard, not a pattern
    const wildcard = /^[*?]/.test(pattern)
      ? '; it is a regular expression, not a wildcard: write .* for "anything", e.g. @example\\.com$'
      : '';
    throw new PorterError('PORTER_USAGE', `scope match: ${(error as Error).message}${wildcard}`, {
      cause: error,
    });
  }
}

/** Whether a key is inside a scope pattern (none: every key is). */
export function keyInScope(pattern: RegExp | undefined, key: string): boolean {
  if (pattern === undefined) return true;
  if (key.length > MAX_SCOPE_KEY_CHARS) return false;
  return pattern.test(key);
}

/**
 * An import's options with its sync options checked and completed: a sync always reads the
 * directory in bulk (`lookup` snapshot); sync options on another mode are refused.
 */
export function checkSyncImport(options: ImportOptions): ImportOptions {
  if (options.mode !== 'sync') {
    if (options.sync !== undefined) throw usage('sync options go with mode sync');
    return options;
  }
  if (options.lookup === 'each') {
    throw usage('lookup: a sync reads the whole directory at once; "each" is not possible');
  }
  return {
    ...options,
    lookup: 'snapshot',
    sync: checkSyncOptions(options.resource, options.sync ?? {}),
  };
}
