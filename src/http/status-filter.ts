/** The `status` query of the result routes: a comma-separated list of result statuses. */
import { PorterError } from '../errors/porter-error.js';
import { RESULT_STATUSES, type ResultStatus } from '../model/import.js';

/** The statuses asked for (undefined: all); an unknown one is a PORTER_USAGE error naming it. */
export function parseStatuses(text: string | undefined): ResultStatus[] | undefined {
  if (!text) return undefined;
  const statuses = text.split(',').map((item) => item.trim());
  for (const status of statuses) {
    if (!(RESULT_STATUSES as readonly string[]).includes(status)) {
      throw new PorterError(
        'PORTER_USAGE',
        `status: ${status} is not one of ${RESULT_STATUSES.join(', ')}`,
      );
    }
  }
  return statuses as ResultStatus[];
}
