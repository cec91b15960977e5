/**
 * The two rules that keep a job on the server its operator named. When it is submitted, a job
 * records its target's name and fingerprint (`bindTarget`); when it runs, a process runs it
 * against its own configuration of that name only if the fingerprint still matches
 * (`jobTarget`). Neither falls back to another target, and a refusal sends nothing.
 */
import { checkTargetAllowed } from '../auth/target-limits.js';
import { PorterError } from '../errors/porter-error.js';
import { DEFAULT_TARGET, displayUrl, type Target, type TargetSet } from './targets.js';

/** What a job carries of its target. */
export interface JobTargetRef {
  /** The target's name; jobs from before targets existed carry none and mean `default`. */
  target?: string;
  /** The target's fingerprint when the job was submitted. */
  targetFingerprint?: string;
  /** Where the target pointed when the job was submitted, credentials left out (for people). */
  targetUrl?: string;
}

const TARGET_REFUSALS = new Set([
  'PORTER_TARGET_UNKNOWN',
  'PORTER_TARGET_CHANGED',
  'PORTER_TARGET_UNAVAILABLE',
  'PORTER_TARGET_READ_ONLY',
]);

/** Whether the error is a target's refusal of a job: nothing was sent, and retrying cannot help. */
export function isTargetRefusal(error: unknown): error is PorterError {
  return error instanceof PorterError && TARGET_REFUSALS.has(error.code);
}

/** A target whose secrets could not be read cannot be used: PORTER_TARGET_UNAVAILABLE. */
export function usableTarget(target: Target): Target {
  if (target.client) return target;
  throw new PorterError(
    'PORTER_TARGET_UNAVAILABLE',
    `target "${target.name}" cannot be used here: ${target.summary.problem ?? 'its secrets cannot be read'}`,
    { details: { target: target.name } },
  );
}

/**
 * The target a job is submitted for: the name asked (else `default`, refused with
 * PORTER_USAGE naming the targets when there is none), which must be known here; a fingerprint the job carries already (a retry, an apply, an undo of an earlier job)
 * must still match; a job that writes is refused on a read-only target.
 */
export function bindTarget(
  targets: TargetSet,
  ref: JobTargetRef,
  intent: { writes: boolean },
): { target: Target; ref: Required<JobTargetRef> } {
  const target = targets.resolve(ref.target);
  // a principal limited to other targets (a token's --targets) is refused
  checkTargetAllowed(target.name);
  if (ref.targetFingerprint !== undefined && ref.targetFingerprint !== target.fingerprint) {
    throw changed(target, ref);
  }
  if (intent.writes && target.readOnly) {
    throw new PorterError(
      'PORTER_TARGET_READ_ONLY',
      `target "${target.name}" (${target.summary.url}) is read-only: nothing is written to it; a --dry-run still plans`,
      { details: { target: target.name } },
    );
  }
  return {
    target,
    ref: {
      target: target.name,
      targetFingerprint: target.fingerprint,
      targetUrl: target.summary.url,
    },
  };
}

/**
 * The target a job runs against, from this process's configuration: unknown here →
 * PORTER_TARGET_UNKNOWN; configured differently from when the job was submitted →
 * PORTER_TARGET_CHANGED; secrets unreadable → PORTER_TARGET_UNAVAILABLE.
 */
export function jobTarget(targets: TargetSet, ref: JobTargetRef): Target {
  const target = targets.require(ref.target ?? DEFAULT_TARGET);
  if (ref.targetFingerprint !== undefined && ref.targetFingerprint !== target.fingerprint) {
    throw changed(target, ref);
  }
  return usableTarget(target);
}

function changed(target: Target, ref: JobTargetRef): PorterError {
  const was = ref.targetUrl === undefined ? '' : ` for ${displayUrl(ref.targetUrl)}`;
  return new PorterError(
    'PORTER_TARGET_CHANGED',
    `target "${target.name}" was submitted${was} but is configured here as ${target.summary.url} (URL or sign-in differ); nothing was sent: every porter process must read the same targets`,
    { details: { target: target.name } },
  );
}
