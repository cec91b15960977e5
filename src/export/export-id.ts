/**
 * Export ids, which are also the names of run directories: `exp_`, the UTC time to the
 * millisecond, and six base32 characters, so names sort by time and never clash.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Ids from outside (URLs, CLI, directory names) must match this. */
export const EXPORT_ID_PATTERN = /^exp_\d{8}T\d{9}Z_[0-9a-z]{6}$/;

function suffix(bytes: Uint8Array): string {
  let text = '';
  for (let index = 0; index < 6; index++) text += ALPHABET[bytes[index] % 32];
  return text;
}

function timePart(time: number): string {
  // 2026-01-02T03:04:05.006Z → 20260102T030405006Z
  return new Date(time).toISOString().replace(/[-:.]/g, '');
}

/** A new id for a run started at `now`. */
export function newExportId(now: number = Date.now()): string {
  return `exp_${timePart(now)}_${suffix(randomBytes(6))}`;
}

/**
 * The id of a scheduled run: from the time it was scheduled for and its job id, so a job
 * retried after its worker died finds the run it began instead of starting another.
 */
export function scheduledExportId(scheduledAt: number, jobId: string): string {
  return `exp_${timePart(scheduledAt)}_${suffix(createHash('sha256').update(jobId).digest())}`;
}

/** Whether a string is an export id (and so safe in a key or a path). */
export function isValidExportId(value: string): boolean {
  return EXPORT_ID_PATTERN.test(value);
}
