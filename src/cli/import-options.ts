/**
 * The import options, declared once for every command that starts an import (`porter import`,
 * `porter sync`, `porter watch`, `porter schedule add --import`), the sync's rails among them,
 * and checked once before anything is stored. The HTTP API takes the same options as fields
 * (src/http/import-request.ts); a test holds the two lists together.
 */
import { checkEncoding, ENCODING_OPTION_TEXT } from '../ingest/text-encoding.js';
import type { Command } from 'commander';
import type { ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import {
  IMPORT_MODES,
  LOOKUP_MODES,
  type ImportMode,
  type ImportOptions,
  type LookupMode,
} from '../model/import.js';
import { addTargetOption, failureLimitText, oneOf, positiveInteger } from './options.js';
import { readJsonFile } from './paths.js';
import { checkSyncOptions } from '../sync/sync-options.js';
import { checkStreamOption } from '../imports/stream-option.js';
import {
  addSyncOptions,
  hasSyncOptions,
  syncOptionsFromCli,
  type SyncCommandOptions,
} from './sync.js';

/** The options as commander hands them over. */
export interface ImportOptionValues extends SyncCommandOptions {
  target?: string;
  mode?: ImportMode;
  batchSize: number;
  map?: string;
  delimiter?: string;
  listSeparator?: string;
  encoding?: string;
  emptyAsClear?: boolean;
  allowAdmin?: boolean;
  allowLookalike?: boolean;
  maxFailures?: string;
  lookup?: LookupMode;
  dryRun?: boolean;
  stream?: boolean;
}

/** Which import options a command offers, and how it words the ones that differ. */
export interface ImportOptionsOffered {
  /**
   * `required` (the default); `optional` for a command that also does something else and
   * checks it itself; `none` for a command that is itself one mode (`porter sync`).
   */
  mode?: 'required' | 'optional' | 'none';
  /** Whether `--lookup` is offered (not for a sync, which always reads in bulk). @defaultValue true */
  lookup?: boolean;
  allowAdmin?: string;
  dryRun?: string;
  /** Whether `--stream` is offered (not for a sync, which needs its whole file). @defaultValue true */
  stream?: boolean;
}

/** Declares the import options on a command. */
export function addImportOptions(command: Command, offered: ImportOptionsOffered = {}): Command {
  const modeText = IMPORT_MODES.join(', ');
  const mode = oneOf('--mode', IMPORT_MODES);
  if ((offered.mode ?? 'required') === 'required') {
    command.requiredOption('--mode <mode>', modeText, mode);
  } else if (offered.mode === 'optional') {
    command.option('--mode <mode>', `import mode: ${modeText}`, mode);
  }
  addTargetOption(command, 'the target (named admin server) the import writes to');
  command
    .option('--batch-size <n>', 'records per call', positiveInteger('--batch-size'), 100)
    .option(
      '--map <file>',
      'mapping file (JSON): columns, ignore, defaults, fields, tables, when (docs/mapping.md)',
    )
    .option(
      '--delimiter <char>',
      "CSV delimiter: , ; tab or | (default: the mapping file's delimiter, else detected)",
    )
    .option(
      '--list-separator <char>',
      "separator of lists inside one cell (default: the mapping file's listSeparator, else |)",
    )
    .option('--encoding <name>', ENCODING_OPTION_TEXT)
    .option('--empty-as-clear', 'an empty cell clears the field instead of leaving it as is')
    .option(
      '--allow-admin',
      offered.allowAdmin ??
        'allow user types other than "General User", changing user types, and deleting such users',
    )
    .option(
      '--allow-lookalike',
      'allow a key that looks like another key (case, width, confusable letters)',
    )
    .option(
      '--max-failures <n>',
      'stop once this many records failed (a number, or a percentage like 5%)',
      failureLimitText('--max-failures'),
    );
  if (offered.lookup ?? true) {
    command.option(
      '--lookup <how>',
      'auto, snapshot or each; default PORTER_LOOKUP',
      oneOf('--lookup', LOOKUP_MODES),
    );
  }
  command.option(
    '--dry-run',
    offered.dryRun ?? 'plan only: nothing is written (then: porter apply ID)',
  );
  if (offered.stream ?? true) {
    command.option(
      '--stream',
      'send each batch once its rows are read and checked, before the file is whole; a file that breaks off then leaves the batches before the break sent (docs/streaming.md)',
    );
  }
  // the sync's rails: every command that may run a sync takes them
  return addSyncOptions(command);
}

/**
 * The import options of a command line, checked as the import would check them (mapping file
 * read, delimiter, mode for the resource, the sync's options with its --protect file read);
 * throws a PorterError before anything is stored.
 */
export async function importOptionsFrom(
  resource: ResourceName,
  values: ImportOptionValues,
): Promise<ImportOptions> {
  if (values.mode === undefined) {
    throw new PorterError('PORTER_USAGE', `--mode is required: ${IMPORT_MODES.join(', ')}`);
  }
  // the checks (mapping, expressions, ingest options) are loaded here, not by a command's --help
  const [{ checkIngestOptions, DEFAULT_LIST_SEPARATOR }, { readMappingFile }] = await Promise.all([
    import('../ingest/options.js'),
    import('../mapping/read-mapping-file.js'),
  ]);
  const mapping = values.map
    ? await readMappingFile(values.map, await readJsonFile(values.map, '--map'), resource)
    : undefined;
  // an option given on the command line wins over the mapping file
  const delimiter = values.delimiter === 'tab' ? '\t' : (values.delimiter ?? mapping?.delimiter);
  const listSeparator = values.listSeparator ?? mapping?.listSeparator ?? DEFAULT_LIST_SEPARATOR;
  const encoding = checkEncoding(values.encoding);
  checkIngestOptions({
    resource,
    mode: values.mode,
    delimiter,
    listSeparator,
    mapping,
  });
  checkStreamOption({ mode: values.mode, stream: values.stream === true });
  if (values.mode !== 'sync' && hasSyncOptions(values)) {
    throw new PorterError('PORTER_USAGE', 'the sync options go with --mode sync');
  }
  // a --protect file is read now: a schedule or a watch keeps the keys it held when added
  const sync = values.mode === 'sync' ? await syncOptionsFromCli(values) : undefined;
  if (sync) checkSyncOptions(resource, sync);
  return {
    ...(values.target !== undefined ? { target: values.target } : {}),
    resource,
    mode: values.mode,
    batchSize: values.batchSize,
    listSeparator,
    delimiter,
    ...(encoding !== undefined ? { encoding } : {}),
    emptyAsClear: values.emptyAsClear === true,
    allowAdmin: values.allowAdmin === true,
    allowLookalike: values.allowLookalike === true,
    maxFailures: values.maxFailures,
    lookup: values.lookup,
    dryRun: values.dryRun === true,
    ...(values.stream === true ? { stream: true } : {}),
    mapping,
    sync,
  };
}
