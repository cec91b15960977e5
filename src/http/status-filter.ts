/** The `status` and `action` queries of the result routes: comma-separated lists. */
import { PorterError } from '../errors/porter-error.js';
import {
  RECORD_ACTIONS,
  RESULT_STATUSES,
  type RecordAction,
  type ResultStatus,
} from '../model/import.js';

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

/** The record actions asked for (undefined: all); an unknown one is a PORTER_USAGE error. */
export function parseActions(text: string | undefined): RecordAction[] | undefined {
  if (!text) return undefined;
  const actions = text.split(',').map((item) => item.trim());
  for (const action of actions) {
    if (!(RECORD_ACTIONS as readonly string[]).includes(action)) {
      throw new PorterError(
        'PORTER_USAGE',
        `action: ${action} is not one of ${RECORD_ACTIONS.join(', ')}`,
      );
    }
  }
  return actions as RecordAction[];
}
