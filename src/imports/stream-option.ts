/** The `stream` option (docs/streaming.md): which imports may take it. */
import { PorterError } from '../errors/porter-error.js';
import type { ImportOptions } from '../model/import.js';

/**
 * Refuses `stream` for a sync: what it does with the server records its file leaves out (lock,
 * delete) needs the whole file, and its plan's thresholds are counted over all of it.
 */
export function checkStreamOption(options: Pick<ImportOptions, 'mode' | 'stream'>): void {
  if (options.stream !== true || options.mode !== 'sync') return;
  throw new PorterError(
    'PORTER_USAGE',
    'stream: a sync cannot stream; what it does with the records its file leaves out needs the whole file. Import with mode upsert and stream, or sync without stream',
    { details: { field: 'stream' } },
  );
}
