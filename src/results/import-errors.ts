/** The errors the import store raises, worded once. */
import { PorterError } from '../errors/porter-error.js';
import type { ImportState } from '../model/import.js';

export function importNotFound(importId: string): PorterError {
  return new PorterError(
    'PORTER_NOT_FOUND',
    `no import ${importId}: check the id; results expire some days after an import's last activity`,
    { details: { importId } },
  );
}

export function importStateConflict(
  importId: string,
  state: ImportState | undefined,
  wanted: string,
): PorterError {
  return new PorterError('PORTER_CONFLICT', `import ${importId} is ${state ?? 'gone'}; ${wanted}`, {
    details: { importId, state },
  });
}
