/**
 * The one error table. Every error porter raises has a stable code listed here,
 * with the HTTP status the producer API answers and the exit code the CLI ends with.
 * `kind` says whether retrying the same thing can help.
 */
export type FailureKind = 'transient' | 'permanent' | 'ambiguous';

export interface ErrorCodeEntry {
  /** HTTP status used by porter's own API when this error reaches a client. */
  readonly httpStatus: number;
  /** Exit code of the `porter` command when this error ends it. */
  readonly exitCode: number;
  readonly kind: FailureKind;
  /** One line for the docs: what it means and what to do. */
  readonly summary: string;
}

export const ERROR_CODES = {
  // configuration and usage
  PORTER_CONFIG_INVALID: {
    httpStatus: 500,
    exitCode: 78,
    kind: 'permanent',
    summary: 'An environment variable or option has a bad value; the message names it.',
  },
  PORTER_USAGE: {
    httpStatus: 400,
    exitCode: 64,
    kind: 'permanent',
    summary: 'A command or request was called with wrong arguments.',
  },
  PORTER_REDIS_UNAVAILABLE: {
    httpStatus: 503,
    exitCode: 69,
    kind: 'transient',
    summary:
      'Redis does not answer where REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS say; start one or point them at one.',
  },
  PORTER_REDIS_FULL: {
    httpStatus: 503,
    exitCode: 69,
    kind: 'transient',
    summary:
      'Redis is full (maxmemory reached under noeviction) and refused the upload: its staged rows are removed and the import ends failed (once Redis has room to record it). Free memory in Redis or raise its maxmemory, then upload again.',
  },
  PORTER_REDIS_UNSUITABLE: {
    httpStatus: 500,
    exitCode: 78,
    kind: 'permanent',
    summary:
      'Redis answers but is not what the configuration says (a Cluster or a Sentinel where REDIS_URL names one node, or the other way round), refuses Lua scripts, or evicts keys when full (a maxmemory-policy other than noeviction, unless PORTER_ALLOW_EVICTION=true); the message says what to set.',
  },
  // producer API
  PORTER_UNAUTHORIZED: {
    httpStatus: 401,
    exitCode: 77,
    kind: 'permanent',
    summary: 'Missing or wrong bearer token for the porter API.',
  },
  PORTER_FORBIDDEN: {
    httpStatus: 403,
    exitCode: 77,
    kind: 'permanent',
    summary:
      'The principal is known but its role (or its target limits) does not allow the action; the message names the role needed. Nothing changed.',
  },
  PORTER_APPROVAL_SELF: {
    httpStatus: 403,
    exitCode: 77,
    kind: 'permanent',
    summary:
      'Four eyes: the plan must be approved or applied by another principal than the one who started it.',
  },
  PORTER_RATE_LIMITED: {
    httpStatus: 429,
    exitCode: 77,
    kind: 'permanent',
    summary:
      'Too many failed sign-ins or bad tokens from this address; wait a minute before trying again.',
  },
  PORTER_UNSUPPORTED_MEDIA_TYPE: {
    httpStatus: 415,
    exitCode: 64,
    kind: 'permanent',
    summary:
      'The upload has a content type porter does not read; send multipart/form-data, text/csv, application/json or application/x-ndjson.',
  },
  PORTER_UPLOAD_TOO_LARGE: {
    httpStatus: 413,
    exitCode: 65,
    kind: 'permanent',
    summary:
      "The upload is larger than PORTER_MAX_UPLOAD_BYTES, or a SCIM request is over ServiceProviderConfig's bulk.maxPayloadSize or bulk.maxOperations (scimType tooMany).",
  },
  PORTER_NOT_FOUND: {
    httpStatus: 404,
    exitCode: 66,
    kind: 'permanent',
    summary:
      'No import, export or schedule with that id or name (results may have expired), or no readable file or directory at a path given to the command.',
  },
  PORTER_CONFLICT: {
    httpStatus: 409,
    exitCode: 65,
    kind: 'permanent',
    summary:
      'The operation does not fit the current state (for example resuming a finished import).',
  },
  // SCIM (docs/scim.md)
  PORTER_SCIM_INVALID: {
    httpStatus: 400,
    exitCode: 65,
    kind: 'permanent',
    summary:
      'A SCIM request porter cannot read: a filter, path, value or body that is not valid; the answer names the SCIM scimType (invalidFilter, invalidPath, invalidValue, invalidSyntax, noTarget, mutability, tooMany). Nothing changed.',
  },
  PORTER_SCIM_UNIQUENESS: {
    httpStatus: 409,
    exitCode: 65,
    kind: 'permanent',
    summary:
      'A SCIM create or rename names a userName (compared without regard to case) or a group displayName another record holds. Nothing changed.',
  },
  PORTER_SCIM_VERSION_MISMATCH: {
    httpStatus: 412,
    exitCode: 65,
    kind: 'permanent',
    summary:
      "A SCIM request's If-Match names a version the resource no longer has: read it again, then send the change. Nothing changed.",
  },
  PORTER_BUSY: {
    httpStatus: 503,
    exitCode: 69,
    kind: 'transient',
    summary:
      'Another porter process held a short lock this step needs (two API processes opening the same held SCIM plan) for longer than porter waits; nothing was changed. Send it again shortly.',
  },
  PORTER_SCIM_CHANGE_HELD: {
    httpStatus: 503,
    exitCode: 69,
    kind: 'transient',
    summary:
      "A SCIM delete or deactivation over the target's scim.maxDeletesPerHour: held in the target's held SCIM plan, not applied, answered with Retry-After. An approver releases it (porter approve ID) or drops it (porter cancel ID); the provider's retry is then answered from what was done.",
  },
  PORTER_SCIM_TARGET_PAUSED: {
    httpStatus: 429,
    exitCode: 69,
    kind: 'transient',
    summary:
      "A SCIM change while the target's calls are paused (the DAM asked porter to wait, with a 429 and its Retry-After): refused before anything is sent, answered with the pause's Retry-After. Nothing changed.",
  },
  PORTER_SCIM_CHANGE_DROPPED: {
    httpStatus: 409,
    exitCode: 65,
    kind: 'permanent',
    summary:
      'A SCIM delete or deactivation that was held and then dropped (porter cancel of the held SCIM plan): it is not applied; the provider should not send it again.',
  },
  PORTER_SCIM_PROTECTED: {
    httpStatus: 403,
    exitCode: 77,
    kind: 'permanent',
    summary:
      "A SCIM delete or deactivation of a user the target's scim.protect list names: SCIM never removes one. Nothing changed.",
  },
  // input
  PORTER_INPUT_EMPTY: {
    httpStatus: 400,
    exitCode: 65,
    kind: 'permanent',
    summary: 'The upload holds no records.',
  },
  PORTER_INPUT_UNREADABLE: {
    httpStatus: 400,
    exitCode: 65,
    kind: 'permanent',
    summary: 'The upload cannot be parsed (broken CSV/JSON, invalid UTF-8); nothing was sent.',
  },
  PORTER_INPUT_UNKNOWN_COLUMN: {
    httpStatus: 400,
    exitCode: 65,
    kind: 'permanent',
    summary: 'A column matches no field of the resource; map it or ignore it in a mapping file.',
  },
  PORTER_UPLOAD_ABORTED: {
    httpStatus: 400,
    exitCode: 65,
    kind: 'permanent',
    summary:
      'The upload broke off before it was complete; nothing was sent (a streamed import: only the batches queued before the break were).',
  },
  PORTER_MAPPING_INVALID: {
    httpStatus: 400,
    exitCode: 65,
    kind: 'permanent',
    summary: 'The mapping file is not valid; the message says where.',
  },
  // per-record results
  PORTER_MAPPING_FAILED: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'A mapping expression failed for this record (row, field and message given; for example a table key it does not hold, or an expression past its time or size bound); it was not sent.',
  },
  PORTER_ROW_INVALID: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary: 'A record failed validation (row, field and reason given); it was not sent.',
  },
  PORTER_GROUP_UNRESOLVED: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary: 'A group or user named in the record does not exist on the admin server.',
  },
  PORTER_GROUP_AMBIGUOUS: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'A number in groups, users or groupId is the name of one record and the id of another; write #ID for an id or name:NAME for a name.',
  },
  PORTER_ADMIN_GUARD: {
    httpStatus: 403,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'The record would create or set a user type other than "General User", change a user type, or delete a user who is not a "General User"; pass --allow-admin to permit it.',
  },
  NOT_FOUND: {
    httpStatus: 404,
    exitCode: 2,
    kind: 'permanent',
    summary: 'The record to update does not exist on the admin server.',
  },
  ALREADY_EXISTS: {
    httpStatus: 409,
    exitCode: 2,
    kind: 'permanent',
    summary: 'The record to create already existed before this import.',
  },
  PORTER_REFERENCE_FAILED: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'A migrated record names a record (its group, a member) that did not migrate; the message names it. Fix that one and run the migration again.',
  },
  PORTER_PLAN_STALE: {
    httpStatus: 409,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'The record changed on the admin server after the plan was made; it was not written. Run the dry run again.',
  },
  PORTER_SYNC_ABORTED: {
    httpStatus: 409,
    exitCode: 1,
    kind: 'permanent',
    summary:
      'A sync could not read the whole directory in bulk, or its scope group does not exist; it stopped before writing anything.',
  },
  PORTER_UNDO_UNSUPPORTED: {
    httpStatus: 409,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'This change cannot be turned back through the admin interface (an ACL an import created: there is no ACL DELETE); undo it by hand.',
  },
  PORTER_CANCELLED: {
    httpStatus: 409,
    exitCode: 1,
    kind: 'permanent',
    summary: 'The import was cancelled before this record was sent.',
  },
  PORTER_FAILURE_LIMIT: {
    httpStatus: 409,
    exitCode: 1,
    kind: 'permanent',
    summary: 'The import stopped because its failures passed --max-failures.',
  },
  PORTER_BATCH_ABANDONED: {
    httpStatus: 500,
    exitCode: 1,
    kind: 'permanent',
    summary: 'A batch job failed for a reason outside the admin server; its records were not sent.',
  },
  PORTER_RECORD_TOO_LARGE: {
    httpStatus: 413,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'A record (CSV row, JSON element, NDJSON line) is larger than PORTER_MAX_RECORD_BYTES; it was not read nor sent, the others go on.',
  },
  PORTER_ANCHOR_CONFLICT: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary:
      'The record cannot be matched to the DAM by its anchor without a guess (two rows with one anchor, one anchor on two DAM records, a join that matches two, a name another person holds, or no anchor given); the message names the records. Nothing was sent for it.',
  },
  PORTER_KEY_LOOKALIKE: {
    httpStatus: 422,
    exitCode: 2,
    kind: 'permanent',
    summary:
      "The record's username or group name looks like another one of the same upload (case, width or look-alike letters; the message names it and its row); import with allowLookalike to permit it.",
  },
  // admin interface
  ADMIN_HTTP_ERROR: {
    httpStatus: 502,
    exitCode: 1,
    kind: 'permanent',
    summary: 'The admin server refused the request; its errorcode and message are kept.',
  },
  ADMIN_UNAVAILABLE: {
    httpStatus: 503,
    exitCode: 1,
    kind: 'transient',
    summary:
      'The admin server is busy, rate-limiting or down (408, 429, 503; 502 and 504 on a read); retried. A 502 or 504 on a write is ambiguous.',
  },
  ADMIN_CONNECTION_FAILED: {
    httpStatus: 502,
    exitCode: 1,
    kind: 'transient',
    summary: 'The admin server could not be reached before the request was sent; retried.',
  },
  ADMIN_NO_ANSWER: {
    httpStatus: 504,
    exitCode: 1,
    kind: 'ambiguous',
    summary:
      'The request was sent but no answer came (timeout, reset); what it did is looked up before resending.',
  },
  ADMIN_BAD_RESPONSE: {
    httpStatus: 502,
    exitCode: 1,
    kind: 'ambiguous',
    summary: 'The admin server answered with something that is not the documented JSON shape.',
  },
  ADMIN_NOT_APPLIED: {
    httpStatus: 502,
    exitCode: 2,
    kind: 'permanent',
    summary:
      "The admin server's 2xx answer left the record out, and reading it back did not show it applied; `porter retry` sends it again.",
  },
  // targets
  PORTER_TARGET_UNKNOWN: {
    httpStatus: 400,
    exitCode: 64,
    kind: 'permanent',
    summary:
      'The job names a target this process does not know; targets come from PORTER_TARGETS_FILE and the ADMIN_* variables, and every process must read the same ones. Nothing was sent.',
  },
  PORTER_TARGET_CHANGED: {
    httpStatus: 409,
    exitCode: 65,
    kind: 'permanent',
    summary:
      "The target's URL or sign-in changed between the job's submission and its run (or the worker's configuration differs from the submitter's); nothing was sent. Submit it again against the target as configured now.",
  },
  PORTER_TARGET_READ_ONLY: {
    httpStatus: 409,
    exitCode: 65,
    kind: 'permanent',
    summary:
      'The target is read-only (readOnly in the targets file): every write is refused before anything is sent. Reads, exports, diffs and dry runs still work.',
  },
  PORTER_NOTIFY_FAILED: {
    httpStatus: 502,
    exitCode: 69,
    kind: 'transient',
    summary:
      'A notification could not be delivered (the receiver answered other than 2xx, hung past PORTER_NOTIFY_TIMEOUT_MS, redirected to another host, or is off PORTER_NOTIFY_ALLOWED_HOSTS); `porter notify deliveries --failed` shows each attempt, `porter notify redeliver ID` sends it again.',
  },
  PORTER_TARGET_UNREACHABLE: {
    httpStatus: 503,
    exitCode: 69,
    kind: 'transient',
    summary:
      "The target could not be reached, or refused porter's credentials (401, 403), before any record of the import was sent: the import ended `failed` with the reason and its records `unprocessed`. Fix the address or the credentials, then `porter retry` it.",
  },
  PORTER_SOURCE_UNKNOWN: {
    httpStatus: 400,
    exitCode: 64,
    kind: 'permanent',
    summary:
      'The command or schedule names a source (a directory to read) that PORTER_SOURCES_FILE does not define, or one whose secret cannot be read here. Nothing was read.',
  },
  PORTER_SOURCE_FAILED: {
    httpStatus: 502,
    exitCode: 69,
    kind: 'transient',
    summary:
      'The directory could not be read whole: a failed bind or StartTLS, a size or time limit, a referral porter cannot follow, a dropped connection or a page that errored. The message says which; nothing was written.',
  },
  PORTER_TARGET_UNAVAILABLE: {
    httpStatus: 500,
    exitCode: 78,
    kind: 'permanent',
    summary:
      "The target's secret cannot be read here (its environment variable is unset or its file unreadable); nothing was sent.",
  },
  // exports
  PORTER_EXPORT_FAILED: {
    httpStatus: 500,
    exitCode: 1,
    kind: 'permanent',
    summary: 'An export could not be completed; no partial file is left under the final name.',
  },
  PORTER_INTERNAL: {
    httpStatus: 500,
    exitCode: 1,
    kind: 'permanent',
    summary: 'An unexpected error; the log has details.',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
