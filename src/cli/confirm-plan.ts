/**
 * `porter approve` and `porter apply` say what they will write before they write it: the counts
 * (deletes and locks first) and the first records they delete or lock. On a terminal they ask;
 * elsewhere (a script, cron) they go ahead only with --yes.
 */
import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import type { PlanPreview } from '../app/plan-approval.js';
import { PorterError } from '../errors/porter-error.js';

/** Removal records printed before the question. */
export const SHOWN_REMOVALS = 10;

export interface ConfirmStreams {
  input: Readable & { isTTY?: boolean };
  output: Writable & { isTTY?: boolean };
}

/** What the plan writes, in a few lines: the counts, then its first deletes and locks. */
export function describePreview(preview: PlanPreview): string {
  const what = preview.command === 'approve' ? 'held sync' : 'dry run';
  const lines = [`${what} ${preview.id} writes: ${preview.confirm}`];
  if (preview.removals > 0) {
    lines.push(`deletes and locks (${preview.removals}), first:`);
    for (const record of preview.firstRemovals.slice(0, SHOWN_REMOVALS)) {
      const where = record.serverOnly
        ? 'only on the server'
        : `row ${record.sourceRow ?? record.row}`;
      lines.push(`  ${(record.action ?? '').padEnd(6)} ${record.key ?? '—'} (${where})`);
    }
    const shown = Math.min(SHOWN_REMOVALS, preview.firstRemovals.length);
    if (preview.removals > shown) {
      lines.push(
        `  … and ${preview.removals - shown} more: porter report ${preview.id} --status planned`,
      );
    }
  }
  return lines.join('\n');
}

/**
 * Prints what the plan writes and returns once the operator has confirmed it: --yes, or "y" on a
 * terminal. Refuses (PORTER_USAGE) without a terminal to ask on, and when the answer is not yes.
 */
export async function confirmPlan(
  preview: PlanPreview,
  yes: boolean,
  streams: ConfirmStreams = { input: process.stdin, output: process.stderr },
): Promise<void> {
  const { input, output } = streams;
  output.write(`${describePreview(preview)}\n`);
  if (yes) return;
  const verb = preview.command;
  if (input.isTTY !== true) {
    throw new PorterError(
      'PORTER_USAGE',
      `porter ${verb} asks before it writes (${preview.confirm}), and there is no terminal to ask on; nothing was written. To ${verb} without asking: porter ${verb} ${preview.id} --yes`,
    );
  }
  const prompt = createInterface({ input, output, terminal: output.isTTY === true });
  try {
    const answer = await prompt.question(`${verb} and write ${preview.confirm}? [y/N] `);
    if (/^y(es)?$/i.test(answer.trim())) return;
  } finally {
    prompt.close();
  }
  throw new PorterError('PORTER_USAGE', `not confirmed; nothing was written`);
}
