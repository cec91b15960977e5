/**
 * The conventions of every command that queues work (docs/cli.md, "Conventions"): `--wait` and
 * `--no-wait` on each, one default (return once queued; `porter sync` alone waits, as cron lines
 * rely on its exit code); `--report FILE` on each that ends with records, which waits for the
 * end; `--force` only ever overwrites an output file.
 */
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import type { PorterContext } from '../app/context.js';
import { noteEnded } from '../auth/acting.js';
import type { ReportFormat } from '../app/imports.js';
import { PorterError } from '../errors/porter-error.js';
import type { ImportInfo } from '../model/import.js';
import { oneOf } from './options.js';
import { checkOutputFile, openOutputFile } from './paths.js';
import { importExitCode } from './exit-code.js';

export interface WaitValues {
  /** `--wait` true, `--no-wait` false, neither undefined (the command's default). */
  wait?: boolean;
}

export interface ReportValues extends WaitValues {
  report?: string;
  force?: boolean;
  format: ReportFormat;
}

/** `--wait` and `--no-wait`, the default said in the help. */
export function addWaitOptions(command: Command, what: string, waitsByDefault = false): Command {
  return command
    .option(
      '--wait',
      `follow the ${what} until it ends, then summarize and exit with its code${waitsByDefault ? ' (the default)' : ''}`,
    )
    .option(
      '--no-wait',
      `print the id and return once queued${waitsByDefault ? '' : ' (the default)'}`,
    );
}

/** `--report FILE`, `--force` and `--format` of a command whose work ends with records. */
export function addReportOptions(command: Command, reportText: string): Command {
  return command
    .option('--report <file>', `${reportText} (waits for the end)`)
    .option('--force', 'overwrite the --report file when it exists')
    .option(
      '--format <format>',
      'report format: csv or json',
      oneOf('--format', ['csv', 'json'] as const),
      'csv',
    );
}

/**
 * Whether the command follows its work to the end: as asked, else when a report is to be
 * written, else the command's default. A report with `--no-wait` is refused.
 */
export function willWait(
  values: WaitValues & { report?: string },
  waitsByDefault = false,
): boolean {
  if (values.report !== undefined) {
    if (values.wait === false) {
      throw new PorterError(
        'PORTER_USAGE',
        '--report needs the end of the work: drop --no-wait (or later: porter report ID --out FILE)',
      );
    }
    return true;
  }
  return values.wait ?? waitsByDefault;
}

/**
 * Checks --report and --force before anything is queued: --force goes with an output file, and
 * the report file is new (or forced) and never one of the inputs.
 */
export async function checkReportArguments(
  values: ReportValues,
  inputs: readonly string[] = [],
): Promise<void> {
  if (values.force && !values.report) {
    throw new PorterError(
      'PORTER_USAGE',
      '--force overwrites an output file: it goes with --report FILE',
    );
  }
  if (values.report) {
    await checkOutputFile(values.report, '--report', {
      force: values.force === true,
      inputs,
    });
  }
}

/**
 * The end of a command that queued an import: without waiting, where to follow it; waiting,
 * its progress, its closing lines (the last says why records did not succeed), its report, and
 * the exit code.
 */
export async function finishQueuedImport(
  context: PorterContext,
  info: ImportInfo,
  values: ReportValues,
  options: { waitsByDefault?: boolean; queuedText: string },
): Promise<void> {
  if (!willWait(values, options.waitsByDefault)) {
    noteEnded({ id: info.id, state: info.state, counts: info.counts });
    console.error(`${options.queuedText}; follow with: porter status ${info.id} --follow`);
    return;
  }
  // what following an import takes is loaded by a command that follows one, not by its --help
  const [{ workersRunning, writeReport }, { closingLines, followImport }] = await Promise.all([
    import('../app/imports.js'),
    import('./progress.js'),
  ]);
  const final = await followImport({
    read: () => context.store.get(info.id),
    redis: context.redisWatch,
    stuckHint: async () =>
      (await workersRunning(context))
        ? undefined
        : 'no worker is running: start one with `npx porter worker`',
  });
  if (values.report) {
    const out = await openOutputFile(values.report, '--report', values.force === true);
    await writeReport(context, info.id, out, { format: values.format });
    await finished(out);
    console.error(`report written to ${values.report}`);
  }
  for (const line of closingLines(final)) console.error(line);
  noteEnded({ id: final.id, state: final.state, counts: final.counts });
  process.exitCode = importExitCode(final);
}
