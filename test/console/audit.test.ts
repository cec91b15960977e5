/**
 * The console's Audit page says what each action came to: an import that failed some records is
 * partial (with its counts and exit code), a held sync is held for approval, a failure is
 * failed, and only a refusal is "refused"; an event written before outcomes were, with no status
 * of a refusal, is not called refused either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { AuditEvent } from '../../src/audit/audit-event.js';
import { signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

let harness: ConsoleHarness;

/** A command's result event, as the command line writes it. */
function cliResult(
  who: string,
  what: AuditEvent['what'],
  result: AuditEvent['result'],
): AuditEvent {
  return {
    at: new Date().toISOString(),
    action: 'import.start',
    phase: 'result',
    actionId: `action-of-${who}`,
    who: { name: who, role: 'admin', via: 'cli' },
    from: { address: 'cli' },
    what,
    result,
  };
}

beforeAll(async () => {
  harness = await startConsoleHarness({ workers: false });
  const { audit } = securityOf(harness.pipeline.context);
  const counts = { succeeded: 5, failed: 1, skipped: 0, unprocessed: 0 };
  await audit.append(
    cliResult(
      'cli:partial',
      { command: 'import', state: 'completed_with_errors', counts },
      { ok: false, outcome: 'partial', exitCode: 2 },
    ),
  );
  await audit.append(
    cliResult(
      'cli:held',
      { command: 'sync', state: 'held' },
      { ok: false, outcome: 'held', exitCode: 3 },
    ),
  );
  await audit.append(
    cliResult(
      'cli:failed',
      { command: 'import', state: 'failed' },
      { ok: false, outcome: 'failed', exitCode: 1, code: 'PORTER_INPUT_UNKNOWN_COLUMN' },
    ),
  );
  await audit.append(cliResult('cli:before-outcomes', { command: 'import' }, { ok: false }));
  await audit.append({
    ...cliResult(
      'token:watcher',
      {},
      { ok: false, outcome: 'refused', status: 403, code: 'PORTER_FORBIDDEN' },
    ),
    phase: 'done',
    who: { name: 'token:watcher', role: 'viewer', via: 'token' },
  });
}, 120_000);
afterAll(async () => {
  await harness?.close();
});

describe('the Audit page', () => {
  it('shows partial, held, failed and refused for what they are', async () => {
    const page = await harness.newPage();
    await signIn(page, harness.baseUrl);
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    const table = page.getByRole('table', { name: 'Audit events, newest first' });
    await table.waitFor();
    const resultOf = async (who: string): Promise<string> => {
      const row = table.locator('tbody tr', {
        has: page.locator('td', { hasText: new RegExp(`^${who}$`) }),
      });
      // When, Who, Role, From, Action, Result, What
      return (await row.locator('td').nth(5).textContent()) ?? '';
    };
    expect(await resultOf('cli:partial')).toBe('partial: 5 succeeded, 1 failed (exit 2)');
    expect(await resultOf('cli:held')).toBe('held for approval (exit 3)');
    expect(await resultOf('cli:failed')).toBe('failed PORTER_INPUT_UNKNOWN_COLUMN (exit 1)');
    expect(await resultOf('cli:before-outcomes')).toBe('failed');
    expect(await resultOf('token:watcher')).toBe('refused PORTER_FORBIDDEN');
    expect(harness.problems).toEqual([]);
  });
});
