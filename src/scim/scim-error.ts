/**
 * SCIM errors: porter's errors (src/errors) as RFC 7644 §3.12 bodies. A refusal of the protocol
 * is PORTER_SCIM_INVALID with the `scimType` in its details; other codes take theirs from here.
 */
import { PorterError } from '../errors/porter-error.js';
import type { ErrorCode } from '../errors/codes.js';

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'invalidPath'
  | 'invalidValue'
  | 'invalidSyntax'
  | 'noTarget'
  | 'mutability'
  | 'tooMany'
  | 'uniqueness'
  | 'invalidVers'
  | 'sensitive';

/** The scimType a code answers with, when the code always means one. */
const TYPE_OF_CODE: Partial<Record<ErrorCode, ScimType>> = {
  PORTER_SCIM_UNIQUENESS: 'uniqueness',
  PORTER_SCIM_VERSION_MISMATCH: 'invalidVers',
  PORTER_INPUT_UNREADABLE: 'invalidSyntax',
};

/** A refusal of a SCIM request: 400 with its scimType. */
export function scimInvalid(scimType: ScimType, detail: string): PorterError {
  return new PorterError('PORTER_SCIM_INVALID', detail, { details: { scimType } });
}

export interface ScimErrorBody {
  schemas: [typeof ERROR_SCHEMA];
  status: string;
  scimType?: ScimType;
  detail: string;
  /** porter's stable code, beside the SCIM fields. */
  code: ErrorCode;
}

/** The SCIM body of a porter error; never a stack. */
export function scimErrorBody(error: PorterError): ScimErrorBody {
  const given = error.details.scimType;
  const scimType = typeof given === 'string' ? (given as ScimType) : TYPE_OF_CODE[error.code];
  return {
    schemas: [ERROR_SCHEMA],
    status: String(error.httpStatus),
    ...(scimType ? { scimType } : {}),
    detail: error.message,
    code: error.code,
  };
}
