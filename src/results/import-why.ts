/**
 * Why an import's records did not succeed, in words: from its counts per error code and the
 * first message of each (kept when the results were written), and the breaker's last pause.
 * The closing line of `--wait`, `porter status` and the console say the same.
 */
import type { ErrorCode } from '../errors/codes.js';
import type { ImportInfo, ImportProblem } from '../model/import.js';

/**
 * Codes that say something about the run rather than the record (the server unreachable,
 * refusing, stopped imports): their first message is the reason, said in the summary. Others
 * (a bad row, a duplicate) are counted by code; their rows are in the report.
 */
const RUN_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'ADMIN_UNAVAILABLE',
  'ADMIN_CONNECTION_FAILED',
  'ADMIN_NO_ANSWER',
  'ADMIN_BAD_RESPONSE',
  'ADMIN_HTTP_ERROR',
  'PORTER_CANCELLED',
  'PORTER_FAILURE_LIMIT',
  'PORTER_BATCH_ABANDONED',
  'PORTER_TARGET_UNREACHABLE',
  'PORTER_SYNC_ABORTED',
  'PORTER_TARGET_UNKNOWN',
  'PORTER_TARGET_CHANGED',
  'PORTER_TARGET_READ_ONLY',
  'PORTER_TARGET_UNAVAILABLE',
  'PORTER_INTERNAL',
]);

/** One problem: "12 PORTER_BATCH_ABANDONED (not sent: cannot reach …)". */
function problemText(problem: ImportProblem, alone: boolean): string {
  const said = problem.message && RUN_CODES.has(problem.code);
  if (alone) return said ? `${problem.message} [${problem.code}]` : problem.code;
  return said
    ? `${problem.count} ${problem.code} (${problem.message})`
    : `${problem.count} ${problem.code}`;
}

/**
 * One line per status that has records that did not succeed, e.g.
 * "12 unprocessed: not sent: cannot reach the admin server at http://… (ECONNREFUSED)
 * [PORTER_BATCH_ABANDONED]"; and the breaker's pause, when the import was paused and did not
 * end well. Empty when every record succeeded (or the import predates these counts).
 */
export function whyLines(info: ImportInfo): string[] {
  const lines: string[] = [];
  for (const status of ['failed', 'unprocessed'] as const) {
    const count = info.counts[status];
    const problems = (info.problems ?? []).filter((problem) => problem.status === status);
    if (count === 0 || problems.length === 0) continue;
    const alone = problems.length === 1 && problems[0]!.count === count;
    const parts = problems.map((problem) => problemText(problem, alone));
    const known = problems.reduce((sum, problem) => sum + problem.count, 0);
    if (known < count) parts.push(`${count - known} without a code`);
    lines.push(`${count} ${status}: ${parts.join(', ')}`);
  }
  const stopped = info.counts.unprocessed > 0 || info.state === 'failed';
  if (info.pausedBecause && info.state !== 'paused' && stopped) {
    lines.push(`paused on the way: ${info.pausedBecause}`);
  }
  return lines;
}
