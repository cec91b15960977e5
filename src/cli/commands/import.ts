import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { startImport, workersRunning, writeReport, type ReportFormat } from '../../app/imports.js';
import { isPorterError, PorterError } from '../../errors/porter-error.js';
import type { ImportInfo, ImportMode, ImportOptions } from '../../model/import.js';
import { oneOf } from '../options.js';
import { checkInputFile, checkOutputFile, openOutputFile } from '../paths.js';
import { describeActions, followImport, summarize } from '../progress.js';
import {
  addImportOptions,
  addReportOptions,
  importOptionsFrom,
  type ImportOptionValues,
} from '../import-options.js';
import { withContext } from '../with-context.js';
import { describeSync, wouldBeHeld } from '../sync.js';

export interface ImportCommandOptions extends ImportOptionValues {
  resource: ResourceName;
  mode: ImportMode;
  wait?: boolean;
  report?: string;
  force?: boolean;
  format: ReportFormat;
}

/**
 * Exit code of a finished import: 0 all succeeded, 2 some records did not, 3 a sync held for
 * approval (nothing written), 1 the import failed.
 */
export function importExitCode(info: ImportInfo): number {
  if (info.state === 'held') return 3;
  // a dry run that a real run would hold ends like the real run
  const ended = info.state === 'completed' || info.state === 'completed_with_errors';
  if (ended && wouldBeHeld(info)) return 3;
  if (info.state === 'completed') return 0;
  if (info.state === 'completed_with_errors') return 2;
  return 1;
}

/**
 * Once the import exists, an error that ends it (unreadable, empty or broken upload, unknown
 * column) ends the command with exit 1 like any failed import; errors before it keep their codes.
 */
function endFailedImport(exists: boolean, error: unknown): undefined {
  if (!exists || !isPorterError(error)) throw error;
  console.error(`porter: ${error.message} [${error.code}]`);
  process.exitCode = 1;
  return undefined;
}

export function registerImportCommand(program: Command): void {
  const base = program
    .command('import')
    .description(
      'Import a CSV, JSON or NDJSON file of users, groups or ACLs ("-" reads standard input)',
    )
    .argument('<file>', 'file to import')
    .requiredOption(
      '--resource <resource>',
      'users, groups or acls',
      oneOf('--resource', RESOURCE_NAMES),
    );
  addReportOptions(
    addImportOptions(base).option('--wait', 'follow the import until it ends, then summarize'),
    'with --wait: write the per-record report to this file',
  ).action((file: string, options: ImportCommandOptions) => runImport(file, options));
}

/** Submits a file as an import and, with `wait`, follows it and sets the exit code. */
export async function runImport(file: string, options: ImportCommandOptions): Promise<void> {
  // every option and path is checked before an import is stored
  const { mapping, ...importOptions } = await checkImportArguments(file, options);
  const source = file === '-' ? process.stdin : createReadStream(file);
  await withContext(async (context) => {
    let exists = false;
    const info = await startImport(
      context,
      {
        options: importOptions,
        source,
        fileName: file === '-' ? undefined : basename(file),
        mapping,
      },
      (created) => {
        exists = true;
        console.log(created.id);
      },
    ).catch((error: unknown) => endFailedImport(exists, error));
    if (info === undefined) return;
    if (!options.wait) {
      console.error(
        `queued: ${info.total} records in ${info.batches} batches; follow with: porter status ${info.id}`,
      );
      return;
    }
    const final = await followImport({
      read: () => context.store.get(info.id),
      stuckHint: async () =>
        (await workersRunning(context))
          ? undefined
          : 'no worker is running: start one with `npx porter worker`',
    });
    console.error(summarize(final));
    const actions = describeActions(final);
    if (actions) console.error(actions);
    if (final.sync) console.error(describeSync(final));
    if (options.report) {
      const out = await openOutputFile(options.report, '--report', options.force === true);
      await writeReport(context, info.id, out, { format: options.format });
      await finished(out);
      console.error(`report written to ${options.report}`);
    }
    process.exitCode = importExitCode(final);
  });
}

/**
 * Checks the paths and the options that need more than a parser; returns the import's options,
 * with the mapping read.
 */
async function checkImportArguments(
  file: string,
  options: ImportCommandOptions,
): Promise<ImportOptions> {
  if (options.report && !options.wait) {
    throw new PorterError(
      'PORTER_USAGE',
      '--report needs --wait (or use: porter report ID --out FILE)',
    );
  }
  if (options.force && !options.report) {
    throw new PorterError('PORTER_USAGE', '--force goes with --report FILE');
  }
  if (file !== '-') await checkInputFile(file, 'input file');
  // what the import would refuse (a bad delimiter, deleting ACLs), refused before Redis is asked
  const importOptions = await importOptionsFrom(options.resource, options);
  if (options.report) {
    await checkOutputFile(options.report, '--report', {
      force: options.force === true,
      inputs: [file, ...(options.map ? [options.map] : [])],
    });
  }
  return importOptions;
}
