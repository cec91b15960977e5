/**
 * The sandbox's error answers: one table of errorcodes with their HTTP status,
 * and the error class every handler throws. The body is `{errorcode, message, index?}`.
 */

/** Every errorcode the sandbox answers with, and its HTTP status. docs/sandbox.md (Errors) mirrors this. */
export const SANDBOX_ERRORS = {
  /** Malformed form, JSON, field type, or a required field missing. */
  BAD_REQUEST: 400,
  /** A record names a group, user or group id that does not exist. */
  UNKNOWN_REFERENCE: 400,
  /** Credentials missing or wrong (only when auth is configured). */
  UNAUTHORIZED: 401,
  /** Unknown id or name on update or delete, or an unknown path. */
  NOT_FOUND: 404,
  /** The path exists but not with this method. */
  METHOD_NOT_ALLOWED: 405,
  /** A name or username already taken (create, rename, or twice in one request). */
  ALREADY_EXISTS: 409,
  /** More records in one request than --max-records. */
  TOO_MANY_RECORDS: 413,
  /** The body is larger than the body limit. */
  TOO_LARGE: 413,
  /** A body that is neither multipart/form-data nor application/x-www-form-urlencoded. */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** More requests in a second than --rate-limit; the answer carries Retry-After. */
  RATE_LIMITED: 429,
  /** A fault of the sandbox itself (a bug, or the data file cannot be written). */
  INTERNAL: 500,
  /** An injected failure (--fail-rate), or the sandbox is closing. Nothing was applied. */
  UNAVAILABLE: 503,
} as const;

export type SandboxErrorCode = keyof typeof SANDBOX_ERRORS;

/** The JSON body of every error answer. */
export interface SandboxErrorBody {
  errorcode: SandboxErrorCode;
  message: string;
  /** Index of the failing record in the request's array, when one record is to blame. */
  index?: number;
}

/** An error answer: status from the table, body from the fields. */
export class SandboxError extends Error {
  readonly errorcode: SandboxErrorCode;
  readonly status: number;
  readonly index: number | undefined;
  /** Extra response headers (Retry-After, WWW-Authenticate). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    errorcode: SandboxErrorCode,
    message: string,
    options: { index?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'SandboxError';
    this.errorcode = errorcode;
    this.status = SANDBOX_ERRORS[errorcode];
    this.index = options.index;
    this.headers = options.headers ?? {};
  }

  /** The same error blamed on record `index` (planners throw without knowing it). */
  atIndex(index: number): SandboxError {
    if (this.index !== undefined) return this;
    return new SandboxError(this.errorcode, this.message, { index, headers: { ...this.headers } });
  }

  toBody(): SandboxErrorBody {
    const body: SandboxErrorBody = { errorcode: this.errorcode, message: this.message };
    if (this.index !== undefined) body.index = this.index;
    return body;
  }
}

/** 400 BAD_REQUEST. */
export function badRequest(message: string): SandboxError {
  return new SandboxError('BAD_REQUEST', message);
}

/** 404 NOT_FOUND. */
export function notFound(message: string): SandboxError {
  return new SandboxError('NOT_FOUND', message);
}

/** 409 ALREADY_EXISTS. */
export function alreadyExists(message: string): SandboxError {
  return new SandboxError('ALREADY_EXISTS', message);
}

/** 400 UNKNOWN_REFERENCE. */
export function unknownReference(message: string): SandboxError {
  return new SandboxError('UNKNOWN_REFERENCE', message);
}
