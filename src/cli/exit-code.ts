/** The exit code of a command that followed an import to its end (docs/exit-codes.md). */
import { ERROR_CODES } from '../errors/codes.js';
import type { ImportInfo } from '../model/import.js';
import { wouldBeHeld } from './sync.js';

/**
 * Exit code of a finished import: 0 all succeeded, 2 some records did not, 3 a sync held for
 * approval (nothing written), 69 nothing could be sent (the target cannot be reached or refuses
 * porter's credentials), 1 the import failed otherwise.
 */
export function importExitCode(info: ImportInfo): number {
  if (info.state === 'held') return 3;
  if (info.state === 'failed' && info.reasonCode === 'PORTER_TARGET_UNREACHABLE') {
    return ERROR_CODES.PORTER_TARGET_UNREACHABLE.exitCode;
  }
  // a dry run that a real run would hold ends like the real run
  const ended = info.state === 'completed' || info.state === 'completed_with_errors';
  if (ended && wouldBeHeld(info)) return 3;
  if (info.state === 'completed') return 0;
  if (info.state === 'completed_with_errors') return 2;
  return 1;
}
