/**
 * Reading the admin interface's answers: a JSON array of records checked against the shared
 * schemas, or an error body (`errorcode`, `message`, `index`, or version 1's `error` key).
 */
import { undiciErrorsIfLoaded } from './undici.js';
import { AdminBadResponseError, AdminHttpError } from './errors.js';
import {
  RESOURCES,
  type ResourceDescriptor,
  type ResourceName,
  type ResourceRecordMap,
} from './resources.js';
import { adminErrorBodySchema } from './schemas.js';
import { compileRecordCheck, type FastRecordCheck } from './fast-record-check.js';

/** The records of a 2xx answer; an error body under 2xx is the server refusing. */
export function parseRecords<R extends ResourceName>(
  resource: R,
  text: string,
  info: { method: string; path: string },
): ResourceRecordMap[R][] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new AdminBadResponseError(`${info.method} ${info.path}: answer is not JSON`, info, error);
  }
  if (!Array.isArray(data)) {
    // Clients of the real product look for `errorcode` in the body rather than the status.
    const errorBody = parseErrorBody(data);
    if (errorBody) {
      throw new AdminHttpError(errorBody.message ?? String(errorBody.errorcode), {
        ...info,
        status: 200,
        errorcode: String(errorBody.errorcode),
        index: errorBody.index,
      });
    }
    throw new AdminBadResponseError(
      `${info.method} ${info.path}: answer is not a JSON array`,
      info,
    );
  }
  const schema = answerSchema(resource, info.method);
  const isFine = answerCheck(resource, info.method);
  // a record the fast check is sure of is used as it is: zod would give back an equal one
  return data.map((item) =>
    isFine(item) ? (item as ResourceRecordMap[R]) : checkRecord(schema, item, info),
  );
}

/** The schema a record of an answer must meet: GET answers need ids, write answers ids and keys. */
export function answerSchema<R extends ResourceName>(
  resource: R,
  method: string,
): ResourceDescriptor<R>['schema'] {
  const descriptor: ResourceDescriptor<R> = RESOURCES[resource];
  return method === 'GET' ? descriptor.readAnswerSchema : descriptor.writeAnswerSchema;
}

/** The fast check of that schema (fast-record-check.ts), compiled once per resource. */
function answerCheck(resource: ResourceName, method: string): FastRecordCheck {
  return method === 'GET' ? READ_CHECKS[resource] : WRITE_CHECKS[resource];
}

export function checkRecord<T>(
  schema: {
    safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error };
  },
  item: unknown,
  info: { method: string; path: string },
): T {
  const result = schema.safeParse(item);
  if (!result.success) {
    throw new AdminBadResponseError(
      `${info.method} ${info.path}: answer holds a record of the wrong shape: ${result.error.message}`,
      info,
    );
  }
  return result.data;
}

/** The error body of an answer, if it is one. */

export function parseErrorBody(
  value: unknown,
): { errorcode: string | number; message?: string; index?: number } | undefined {
  let data = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (Array.isArray(data) && data.length === 1) data = data[0];
  const parsed = adminErrorBodySchema.safeParse(data);
  if (parsed.success) return parsed.data;
  // version 1 of the interface reported errors under an "error" key
  if (data !== null && typeof data === 'object' && 'error' in data) {
    const error = (data as { error: unknown }).error;
    return {
      errorcode: 'ERROR',
      message: typeof error === 'string' ? error : JSON.stringify(error),
    };
  }
  return undefined;
}

export function isUndiciSocketError(error: unknown): boolean {
  const undiciErrors = undiciErrorsIfLoaded();
  return (
    (undiciErrors !== undefined &&
      (error instanceof undiciErrors.SocketError ||
        error instanceof undiciErrors.BodyTimeoutError)) ||
    (error as { code?: string } | null)?.code === 'ECONNRESET'
  );
}

/** An error in a few words, with its code when it has one. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/** Fast checks of answers' records, one per resource: GET answers', and write answers'. */
const READ_CHECKS: { readonly [R in ResourceName]: FastRecordCheck } = {
  users: compileRecordCheck(RESOURCES.users.readAnswerSchema),
  groups: compileRecordCheck(RESOURCES.groups.readAnswerSchema),
  acls: compileRecordCheck(RESOURCES.acls.readAnswerSchema),
};
const WRITE_CHECKS: { readonly [R in ResourceName]: FastRecordCheck } = {
  users: compileRecordCheck(RESOURCES.users.writeAnswerSchema),
  groups: compileRecordCheck(RESOURCES.groups.writeAnswerSchema),
  acls: compileRecordCheck(RESOURCES.acls.writeAnswerSchema),
};

/**
 * Checks the records of a GET answer in place, zod's result replacing each record the fast
 * check was not sure of. Returns how many records are checked, and the error of the first
 * wrong one (as checkRecord reports it), which stops the check there.
 */
export function checkReadRecords(
  resource: ResourceName,
  records: unknown[],
  info: { method: string; path: string },
): { checked: number; fault?: unknown } {
  const isFine = answerCheck(resource, 'GET');
  for (let index = 0; index < records.length; index++) {
    if (isFine(records[index])) continue;
    try {
      records[index] = checkRecord(answerSchema(resource, 'GET'), records[index], info);
    } catch (fault) {
      return { checked: index, fault };
    }
  }
  return { checked: records.length };
}
