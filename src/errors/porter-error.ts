import { ERROR_CODES, type ErrorCode } from './codes.js';

export interface PorterErrorDetails {
  /** 1-based record number in the upload. */
  row?: number;
  /** Physical line number in a CSV upload. */
  line?: number;
  field?: string;
  value?: unknown;
  [key: string]: unknown;
}

/** Base class of every error porter raises on purpose. */
export class PorterError extends Error {
  readonly code: ErrorCode;
  readonly details: PorterErrorDetails;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: PorterErrorDetails } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PorterError';
    this.code = code;
    this.details = options.details ?? {};
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].httpStatus;
  }

  get exitCode(): number {
    return ERROR_CODES[this.code].exitCode;
  }

  toJSON(): { code: ErrorCode; message: string; details: PorterErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isPorterError(error: unknown): error is PorterError {
  return error instanceof PorterError;
}
