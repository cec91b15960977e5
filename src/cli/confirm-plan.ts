/**
 * `porter approve`, `porter apply` and `porter undo` say what they will write, and where, before
 * they write it: the counts (deletes and locks first), the first records they delete or lock, and
 * the target by name and address. On a terminal they ask; elsewhere (a script, cron) they go
 * ahead only with --yes.
 */
import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import { targetText, type WritePreview } from '../app/write-preview.js';
import { PorterError } from '../errors/porter-error.js';

/** Removal records printed before the question. */
export const SHOWN_REMOVALS = 10;

export interface ConfirmStreams {
  input: Readable & { isTTY?: boolean };
  output: Writable & { isTTY?: boolean };
}

export interface ConfirmOptions {
  /** Confirmed already: print what is written, ask nothing. */
  yes: boolean;
  /** The command that writes without asking, as the refusal suggests it (default `porter <command> <id> --yes`). */
  again?: string;
}

/** What is written: "dry run 01J…", "held sync 01J…", "the undo of import 01J…". */
function subject(preview: WritePreview): string {
  if (preview.command === 'approve') return `held sync ${preview.id}`;
  if (preview.command === 'apply') return `dry run ${preview.id}`;
  return `the undo of import ${preview.id}`;
}

/** The question asked on a terminal: "Apply dry run 01J… to target prod (https://…)? It writes …". */
export function question(preview: WritePreview): string {
  const what =
    preview.command === 'approve'
      ? `Approve held sync ${preview.id}: write its plan`
      : preview.command === 'apply'
        ? `Apply dry run ${preview.id}: write its plan`
        : `Undo import ${preview.id}: write the undo`;
  return `${what} to ${targetText(preview.target)}? It writes ${preview.confirm} [y/N] `;
}

/** Where the rest of the removals are listed. */
function moreRemovals(preview: WritePreview): string {
  return preview.command === 'undo'
    ? `porter undo ${preview.id} --dry-run --wait, then porter report of that dry run`
    : `porter report ${preview.id} --status planned`;
}

/** What is written and where, in a few lines: the counts, the target, the first deletes and locks. */
export function describePreview(preview: WritePreview): string {
  const lines = [
    `${subject(preview)} writes: ${preview.confirm}`,
    `  to ${targetText(preview.target)}`,
  ];
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
      lines.push(`  … and ${preview.removals - shown} more: ${moreRemovals(preview)}`);
    }
  }
  return lines.join('\n');
}

/**
 * Prints what is written and where, and returns once the operator has confirmed it: --yes, or
 * "y" on a terminal. Refuses (PORTER_USAGE) without a terminal to ask on, and when the answer is
 * not yes.
 */
export async function confirmPlan(
  preview: WritePreview,
  options: ConfirmOptions,
  streams: ConfirmStreams = { input: process.stdin, output: process.stderr },
): Promise<void> {
  const { input, output } = streams;
  output.write(`${describePreview(preview)}\n`);
  if (options.yes) return;
  const verb = preview.command;
  if (input.isTTY !== true) {
    const again = options.again ?? `porter ${verb} ${preview.id} --yes`;
    throw new PorterError(
      'PORTER_USAGE',
      `porter ${verb} asks before it writes (${preview.confirm}) to ${targetText(preview.target)}, and there is no terminal to ask on; nothing was written. To ${verb} without asking: ${again}`,
    );
  }
  const prompt = createInterface({ input, output, terminal: output.isTTY === true });
  try {
    const answer = await prompt.question(question(preview));
    if (/^y(es)?$/i.test(answer.trim())) return;
  } finally {
    prompt.close();
  }
  throw new PorterError('PORTER_USAGE', `not confirmed; nothing was written`);
}
