/**
 * A read of every key of the server that look-alikes are compared with, and what its failure
 * means: a server failing for now is waited out (the import pauses), any other failure fails it.
 */
import { AdminError } from '../admin/errors.js';
import { adminCallOutcome, type AdminCallOutcome } from '../admin/client.js';
import type { RetryPolicy } from '../execute/retry-policy.js';
import { recordErrorMessage } from '../execute/record-error.js';

/** Attempts at the bulk read before an import falls back to one read per record. */
const SNAPSHOT_MAX_ATTEMPTS = 3;

/** Failures of a server that is there but failing for now: the import waits them out. */
const WAIT_OUT: ReadonlySet<AdminCallOutcome> = new Set([
  'server_error',
  'rate_limited',
  'no_answer',
]);

/** Reads in bulk tried before the preparation gives up for now (and the import waits). */
export function snapshotAttempts(retry: RetryPolicy): number {
  return Math.min(SNAPSHOT_MAX_ATTEMPTS, retry.maxAttempts);
}

/**
 * The server answered the bulk read with errors (5xx, 429, no answer), and an import that may
 * create keys must compare them with every key on the server first: it waits, paused, and its
 * preparation is tried again after the breaker's cool-down (or at once on `porter resume`).
 * Nothing is sent meanwhile. A server that cannot be reached at all, or that refuses porter's
 * credentials, is a configuration to fix: that error fails the preparation, and the records end
 * `unprocessed` with it.
 */
export class LookalikeReadError extends Error {
  override readonly name = 'LookalikeReadError';
}

export function lookalikeReadFailed(resource: string, tries: number, error: unknown): unknown {
  if (!WAIT_OUT.has(adminCallOutcome(error))) return error;
  const why = error instanceof AdminError ? recordErrorMessage(error) : String(error);
  return new LookalikeReadError(
    `the admin server failed ${tries} of ${tries} calls to read every ${resource}, which look-alikes are compared with (${why}); the import waits and tries again after the cool-down`,
    { cause: error },
  );
}
