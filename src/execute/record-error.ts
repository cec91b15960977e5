/** How a server's refusal of one record is reported. */
import { AdminError } from '../admin/errors.js';

/** A stable code for a refused record: ALREADY_EXISTS, NOT_FOUND, or ADMIN_HTTP_ERROR. */
export function recordErrorCode(error: unknown): string {
  if (!(error instanceof AdminError)) return 'PORTER_INTERNAL';
  if (isConflict(error)) return 'ALREADY_EXISTS';
  if (isNotFound(error)) return 'NOT_FOUND';
  return error.code;
}

/** The server says the record exists already (409, or an errorcode that says so). */
export function isConflict(error: unknown): boolean {
  if (!(error instanceof AdminError)) return false;
  return error.status === 409 || /exist|duplicate|conflict/i.test(error.errorcode ?? '');
}

/** The server says the record is not there (404, or an errorcode that says so). */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof AdminError)) return false;
  return error.status === 404 || /not.?found|unknown/i.test(error.errorcode ?? '');
}

/** The message to show in a report: the server's own words, with its errorcode. */
export function recordErrorMessage(error: unknown): string {
  if (error instanceof AdminError) {
    const code = error.errorcode ? `${error.errorcode}: ` : '';
    const status = error.status !== undefined ? ` (HTTP ${error.status})` : '';
    return `${code}${error.message}${status}`;
  }
  return error instanceof Error ? error.message : String(error);
}
