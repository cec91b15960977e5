/**
 * What an audited action came to, said the same way for the HTTP API, the command line and a
 * worker's own runs: `ok`; `partial` (an import ran, some records did not succeed: exit 2);
 * `held` (a sync held for approval, nothing written: exit 3); `failed` (it was attempted and
 * did not succeed); `refused` only when it was turned down before anything happened (wrong
 * arguments, rights or state: a 4xx refusal, with nothing created).
 */
import { isPorterError } from '../errors/porter-error.js';
import type { AuditEvent, AuditOutcome } from './audit-event.js';

/** The outcome of an answer's HTTP status, given whether the request created anything. */
export function outcomeOfStatus(status: number, created: boolean): AuditOutcome {
  if (status < 400) return 'ok';
  return status < 500 && !created ? 'refused' : 'failed';
}

/** The outcome of a command's exit code (docs/exit-codes.md). */
export function outcomeOfExit(exitCode: number): AuditOutcome {
  if (exitCode === 0) return 'ok';
  if (exitCode === 2) return 'partial';
  if (exitCode === 3) return 'held';
  return 'failed';
}

/** The outcome of an error that ended the action, given whether it created anything first. */
export function outcomeOfError(error: unknown, created: boolean): AuditOutcome {
  return isPorterError(error) ? outcomeOfStatus(error.httpStatus, created) : 'failed';
}

/** The result of an action an error ended: its outcome, code and message. */
export function errorResult(error: unknown, created: boolean): NonNullable<AuditEvent['result']> {
  return {
    ok: false,
    outcome: outcomeOfError(error, created),
    code: isPorterError(error) ? error.code : 'PORTER_INTERNAL',
    message: error instanceof Error ? error.message.slice(0, 300) : undefined,
  };
}

/** The outcome of an event, for events written before outcomes were (a refusal was a 401 or 403). */
export function outcomeOf(result: NonNullable<AuditEvent['result']>): AuditOutcome {
  if (result.outcome) return result.outcome;
  if (result.ok) return 'ok';
  return result.status === 401 || result.status === 403 ? 'refused' : 'failed';
}

/** How the trail shows a result: `ok`, `partial: 5 succeeded, 1 failed (exit 2)`, `refused PORTER_FORBIDDEN`. */
export function describeResult(event: AuditEvent): string {
  const result = event.result;
  if (!result) return 'intent';
  const outcome = outcomeOf(result);
  const exit = result.exitCode ? ` (exit ${result.exitCode})` : '';
  const code = result.code ? ` ${result.code}` : '';
  if (outcome === 'ok') return 'ok';
  if (outcome === 'partial') {
    const counts = event.what.counts as Record<string, number> | undefined;
    const shown = Object.entries(counts ?? {})
      .filter(([, count]) => count > 0)
      .map(([status, count]) => `${count} ${status}`)
      .join(', ');
    return `partial${shown ? `: ${shown}` : ''}${exit}`;
  }
  if (outcome === 'held') return `held for approval${exit}`;
  return `${outcome}${code}${exit}`;
}
