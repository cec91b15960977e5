import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { RESOURCE_NAMES, type ResourceName } from '../../admin/resources.js';
import { startImport } from '../../app/imports.js';
import { isPorterError } from '../../errors/porter-error.js';
import type { ImportMode, ImportOptions } from '../../model/import.js';
import { oneOf } from '../options.js';
import { checkInputFile } from '../paths.js';
import { addImportOptions, importOptionsFrom, type ImportOptionValues } from '../import-options.js';
import {
  addReportOptions,
  addWaitOptions,
  checkReportArguments,
  finishQueuedImport,
  willWait,
  type ReportValues,
} from '../queued-work.js';
import { keepHeapLean } from '../lean-heap.js';
import { withContext } from '../with-context.js';

export { importExitCode } from '../exit-code.js';

export interface ImportCommandOptions extends ImportOptionValues, ReportValues {
  resource: ResourceName;
  mode: ImportMode;
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
    addWaitOptions(addImportOptions(base), 'import'),
    'write the per-record report to this file when the import ends',
  ).action((file: string, options: ImportCommandOptions) => runImport(file, options));
}

/**
 * Submits a file as an import and, when it waits (`porter sync` does by default), follows it
 * and sets the exit code.
 */
export async function runImport(
  file: string,
  options: ImportCommandOptions,
  waitsByDefault = false,
): Promise<void> {
  // every option and path is checked before an import is stored
  willWait(options, waitsByDefault);
  const { mapping, ...importOptions } = await checkImportArguments(file, options);
  keepHeapLean();
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
    await finishQueuedImport(context, info, options, {
      waitsByDefault,
      queuedText: `queued: ${info.total} records in ${info.batches} batches`,
    });
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
  if (file !== '-') await checkInputFile(file, 'input file');
  // what the import would refuse (a bad delimiter, deleting ACLs), refused before Redis is asked
  const importOptions = await importOptionsFrom(options.resource, options);
  await checkReportArguments(options, [file, ...(options.map ? [options.map] : [])]);
  return importOptions;
}
