/**
 * Which failed records a retry may send again. A retry reads a record as it was first read and
 * sends it alone, so only a failure that came from outside the record (the server unreachable,
 * busy or refusing, a group not there yet, an import stopped before the record's turn) can end
 * otherwise. A failure the record itself caused, or that a check made on purpose, ends the same
 * way again at best, and at worst is no longer caught: a duplicate row sent without the row it
 * repeats overwrites that other record. Those are left out of a retry; the file is to be fixed.
 */
import type { ErrorCode } from './codes.js';
import type { RecordResult } from '../model/import.js';

/** Codes of failed records a retry sends again (docs/failures.md lists them). */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'ADMIN_UNAVAILABLE',
  'ADMIN_CONNECTION_FAILED',
  'ADMIN_NO_ANSWER',
  'ADMIN_BAD_RESPONSE',
  'ADMIN_NOT_APPLIED',
  'ADMIN_HTTP_ERROR',
  'NOT_FOUND',
  'PORTER_GROUP_UNRESOLVED',
  'PORTER_REFERENCE_FAILED',
  'PORTER_CANCELLED',
  'PORTER_FAILURE_LIMIT',
  'PORTER_BATCH_ABANDONED',
  'PORTER_TARGET_UNREACHABLE',
  'PORTER_SYNC_ABORTED',
  'PORTER_INTERNAL',
]);

/** Whether a retry sends this record again: any result but a failure the retry cannot mend. */
export function isRetryable(result: Pick<RecordResult, 'status' | 'errorCode'>): boolean {
  if (result.status !== 'failed') return true;
  return result.errorCode !== undefined && RETRYABLE_CODES.has(result.errorCode as ErrorCode);
}
