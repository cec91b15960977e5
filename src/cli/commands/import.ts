import type { Command } from 'commander';
import { RESOURCE_NAMES } from '../../admin/resources.js';
import { oneOf } from '../options.js';
import { addImportOptions } from '../import-options.js';
import type { ImportCommandOptions } from '../import-run.js';
import { addReportOptions, addWaitOptions } from '../queued-work.js';

export { importExitCode } from '../exit-code.js';

/** `--source NAME` and `--incremental`: rows read from a directory instead of a file. */
export function addSourceOptions(command: Command): Command {
  return command
    .option(
      '--source <name>',
      'read the rows from this directory source (PORTER_SOURCES_FILE; docs/sources.md) instead of a file',
    )
    .option(
      '--incremental',
      'with --source: only the entries changed since the last read, created or updated (never locked or deleted)',
    );
}

export function registerImportCommand(program: Command): void {
  const base = program
    .command('import')
    .description(
      'Import a CSV, JSON or NDJSON file of users, groups or ACLs ("-" reads standard input)',
    )
    .argument('[file]', 'file to import (or --source)')
    .requiredOption(
      '--resource <resource>',
      'users, groups or acls',
      oneOf('--resource', RESOURCE_NAMES),
    );
  addSourceOptions(base);
  addReportOptions(
    addWaitOptions(addImportOptions(base), 'import'),
    'write the per-record report to this file when the import ends',
  ).action(async (file: string | undefined, options: ImportCommandOptions) => {
    // what an import runs is loaded when one runs, not for --help or a refused option
    const { runImport } = await import('../import-run.js');
    await runImport(file, options);
  });
}
