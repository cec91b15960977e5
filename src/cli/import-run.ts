/** What `porter import` and `porter sync` run: a file or a directory source submitted as an import. */
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { startImport } from '../app/imports.js';
import { PorterError } from '../errors/porter-error.js';
import { noteEnded } from '../auth/acting.js';
import { isPorterError } from '../errors/porter-error.js';
import type { ImportOptions } from '../model/import.js';
import { checkInputFile } from './paths.js';
import { importOptionsFrom } from './import-options.js';
import { checkReportArguments, finishQueuedImport, willWait } from './queued-work.js';
import { keepHeapLean } from './lean-heap.js';
import { withContext } from './with-context.js';
import type { ResourceName } from '../admin/resources.js';
import type { ImportMode } from '../model/import.js';
import type { ImportOptionValues } from './import-options.js';
import type { ReportValues } from './queued-work.js';

/** The options of `porter import` (and, but for mode and resource, of `porter sync`). */
export interface ImportCommandOptions extends ImportOptionValues, ReportValues {
  resource: ResourceName;
  mode: ImportMode;
  /** Read the rows from this directory source instead of a file. */
  source?: string;
  /** With --source: only the entries changed since the last read, upserted. */
  incremental?: boolean;
}
/**
 * Once the import exists, an error that ends it (unreadable, empty or broken upload, unknown
 * column) ends the command with exit 1 like any failed import; errors before it keep their codes.
 */
function endFailedImport(exists: boolean, error: unknown): undefined {
  if (!exists || !isPorterError(error)) throw error;
  console.error(`porter: ${error.message} [${error.code}]`);
  noteEnded({ state: 'failed', code: error.code });
  process.exitCode = 1;
  return undefined;
}

/**
 * Submits a file as an import and, when it waits (`porter sync` does by default), follows it
 * and sets the exit code.
 */
export async function runImport(
  file: string | undefined,
  options: ImportCommandOptions,
  waitsByDefault = false,
): Promise<void> {
  if ((file === undefined) === (options.source === undefined)) {
    throw new PorterError('PORTER_USAGE', 'give a file or --source NAME, not both');
  }
  if (options.incremental && options.source === undefined) {
    throw new PorterError('PORTER_USAGE', '--incremental goes with --source');
  }
  // every option and path is checked before an import is stored
  willWait(options, waitsByDefault);
  if (options.source !== undefined) return runSourceImport(options.source, options, waitsByDefault);
  return runFileImport(file!, options, waitsByDefault);
}

async function runFileImport(
  file: string,
  options: ImportCommandOptions,
  waitsByDefault: boolean,
): Promise<void> {
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

/** Reads a directory source and submits its rows, as runImport does a file's. */
async function runSourceImport(
  sourceName: string,
  options: ImportCommandOptions,
  waitsByDefault: boolean,
): Promise<void> {
  const { mapping, ...importOptions } = await importOptionsFrom(options.resource, options);
  await checkReportArguments(options, options.map ? [options.map] : []);
  // the directory readers (LDAP among them) are loaded only for an import from a source
  const { startSourceImport } = await import('../app/source-import.js');
  keepHeapLean();
  await withContext(async (context) => {
    let exists = false;
    const info = await startSourceImport(
      context,
      {
        source: sourceName,
        options: { ...importOptions, mapping },
        incremental: options.incremental === true,
      },
      (created) => {
        exists = true;
        console.log(created.id);
      },
    ).catch((error: unknown) => endFailedImport(exists, error));
    if (info === undefined) return;
    const read = info.options.source;
    if (read) {
      console.error(
        `read ${read.entries} entries from source ${read.name} in ${read.durationMs} ms` +
          (read.since !== undefined ? ` (changed since ${read.since})` : ''),
      );
    }
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
