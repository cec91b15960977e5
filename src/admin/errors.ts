/**
 * Errors of the admin interface and the one function that classifies a failure
 * as transient, permanent or ambiguous. Retries, bisection and reports all ask it.
 */
import { ERROR_CODES, type ErrorCode, type FailureKind } from '../errors/codes.js';
import { PorterError } from '../errors/porter-error.js';

export interface AdminErrorInfo {
  method: string;
  /** Path and non-secret query of the request; never carries credentials. */
  path: string;
  status?: number;
  /** `errorcode` of the server's error body. */
  errorcode?: string;
  /** Index of the failing record, when the server names one. */
  index?: number;
  /** Milliseconds the server asked us to wait (Retry-After). */
  retryAfterMs?: number;
}

/** Base of every admin interface failure. */
export class AdminError extends PorterError {
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly errorcode: string | undefined;
  readonly index: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, info: AdminErrorInfo, cause?: unknown) {
    super(code, message, { cause, details: { ...info } });
    this.name = 'AdminError';
    this.method = info.method;
    this.path = info.path;
    this.status = info.status;
    this.errorcode = info.errorcode;
    this.index = info.index;
    this.retryAfterMs = info.retryAfterMs;
  }
}

/**
 * An error's message for a summary: a refusal of porter's own account (401, 403) is said as
 * such, since every record would meet it.
 */
export function describeAdminFailure(error: Error): string {
  if (error instanceof AdminError && (error.status === 401 || error.status === 403)) {
    return (
      `the admin server refused porter's credentials (HTTP ${error.status} on ` +
      `${error.method} ${error.path}): ${error.message}`
    );
  }
  return error.message;
}

/**
 * The error, or one of its causes, that says the target is down for porter as configured: no
 * connection could be made, or the server refused porter's own credentials (401, 403). Every
 * record would meet it; undefined for any other failure.
 */
export function targetDownError(error: unknown): AdminError | undefined {
  let at: unknown = error;
  for (let depth = 0; at instanceof Error && depth < 8; depth++, at = at.cause) {
    if (at instanceof AdminConnectionError) return at;
    if (at instanceof AdminError && (at.status === 401 || at.status === 403)) return at;
  }
  return undefined;
}

const TRANSIENT_STATUSES = new Set([408, 429, 502, 503, 504]);
/** Answers of a proxy or gateway in front of the server, which may have applied the request. */
const GATEWAY_STATUSES = new Set([502, 504]);

/** The server answered with an error status, or with an error body under a 2xx status. */
export class AdminHttpError extends AdminError {
  constructor(message: string, info: AdminErrorInfo & { status: number }) {
    super(
      TRANSIENT_STATUSES.has(info.status) ? 'ADMIN_UNAVAILABLE' : 'ADMIN_HTTP_ERROR',
      message,
      info,
    );
    this.name = 'AdminHttpError';
  }
}

/** The connection could not be made: nothing reached the server. */
export class AdminConnectionError extends AdminError {
  constructor(message: string, info: AdminErrorInfo, cause?: unknown) {
    super('ADMIN_CONNECTION_FAILED', message, info, cause);
    this.name = 'AdminConnectionError';
  }
}

/**
 * The request went out and no answer came back (reset, timeout, an answer that broke off).
 * A write may or may not have been applied: ambiguous. A GET changes nothing: transient.
 */
export class AdminNoAnswerError extends AdminError {
  constructor(message: string, info: AdminErrorInfo, cause?: unknown) {
    super('ADMIN_NO_ANSWER', message, info, cause);
    this.name = 'AdminNoAnswerError';
  }
}

/** The server answered 2xx with a body that is not the documented shape. */
export class AdminBadResponseError extends AdminError {
  constructor(message: string, info: AdminErrorInfo, cause?: unknown) {
    super('ADMIN_BAD_RESPONSE', message, info, cause);
    this.name = 'AdminBadResponseError';
  }
}

/** Methods that change nothing on the server: when they go unanswered, nothing is in doubt. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * Transient: retrying the same request can help (connection refused, 408, 429, 502, 503, 504,
 * and a GET that got no answer: it cannot have changed anything).
 * Permanent: it cannot (400, 401, 403, 404, 409, 413, 422 and other 4xx).
 * Ambiguous: a write was sent and we do not know what it did (no answer, 500, a bad body):
 * look before resending it.
 */
export function classifyFailure(error: unknown): FailureKind {
  if (error instanceof AdminNoAnswerError && SAFE_METHODS.has(error.method.toUpperCase())) {
    return 'transient';
  }
  if (error instanceof AdminHttpError) {
    const status = error.status ?? 0;
    // a gateway's 502 or 504 may come after its upstream applied the write: look before resending
    if (GATEWAY_STATUSES.has(status) && !SAFE_METHODS.has(error.method.toUpperCase())) {
      return 'ambiguous';
    }
    if (TRANSIENT_STATUSES.has(status)) return 'transient';
    if (status >= 400 && status < 500) return 'permanent';
    if (status >= 500) return 'ambiguous';
    // a 2xx carrying an error body: the server said no
    return 'permanent';
  }
  if (error instanceof PorterError) return ERROR_CODES[error.code].kind;
  return 'permanent';
}

/** Parses a Retry-After header (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
