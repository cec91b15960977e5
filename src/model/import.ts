/** The vocabulary of an import, shared by every room. */
import type { StagedAnchor } from '../anchor/anchor-rows.js';
import type { ResourceName } from '../admin/resources.js';
import type { ErrorCode } from '../errors/codes.js';

/** `sync`: upsert the file's records, and handle the server's records the file leaves out. */
export type ImportMode = 'create' | 'upsert' | 'update' | 'delete' | 'sync';
export const IMPORT_MODES: readonly ImportMode[] = ['create', 'upsert', 'update', 'delete', 'sync'];

export type ImportState =
  | 'receiving'
  | 'queued'
  | 'running'
  | 'paused'
  | 'completed'
  | 'completed_with_errors'
  | 'failed'
  | 'cancelled'
  /** A sync whose plan passed its deletion threshold: planned, nothing written, awaiting approval. */
  | 'held';

export const FINAL_IMPORT_STATES: ReadonlySet<ImportState> = new Set([
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
]);

/**
 * The states an import's batches (and its preparation) work in: a streamed import's also while
 * its upload is still received. Ending one from any of them stops its work.
 */
export const WORKING_IMPORT_STATES: readonly ImportState[] = [
  'receiving',
  'queued',
  'running',
  'paused',
];

/** How an import learns what the server holds: one bulk read, or one read per record. */
export type LookupMode = 'auto' | 'snapshot' | 'each';
export const LOOKUP_MODES: readonly LookupMode[] = ['auto', 'snapshot', 'each'];

/** What an import used, recorded in its state. */
export interface LookupInfo {
  mode: 'snapshot' | 'each';
  /** What was asked for (`auto` decides per import). */
  requested: LookupMode;
  /** Why this mode, in a few words (the auto rule, or a fallback). */
  why: string;
  /** Snapshot only: when its read began, the server's records of the resource, and those kept. */
  takenAt?: string;
  records?: number;
  kept?: number;
  durationMs?: number;
  /** Snapshot only: imports whose snapshots that one read of the server made, when more than one. */
  sharedBy?: number;
}

/** `planned`: a dry run's record that would be written (its action says how). */
export type ResultStatus = 'succeeded' | 'failed' | 'skipped' | 'unprocessed' | 'planned';
export const RESULT_STATUSES: readonly ResultStatus[] = [
  'succeeded',
  'failed',
  'skipped',
  'unprocessed',
  'planned',
];

/**
 * What a record's result did, or (dry run) would do; `unchanged`: equal already, no call;
 * `lock`: a sync set the status of a user absent from its file to "Locked".
 */
/**
 * What a record's write is: `adopt` (a DAM record without an anchor joined now, its anchor
 * written), `rename` (an anchored record whose key changes in place), `reactivate` (an anchored
 * Locked user made Active) are updates by another name.
 */
export type RecordAction =
  'create' | 'update' | 'delete' | 'unchanged' | 'lock' | 'adopt' | 'rename' | 'reactivate';
export const RECORD_ACTIONS: readonly RecordAction[] = [
  'create',
  'update',
  'adopt',
  'rename',
  'reactivate',
  'delete',
  'unchanged',
  'lock',
];

/** Actions that are a PUT of an existing record (an update whatever it is called). */
export const UPDATE_ACTIONS: ReadonlySet<RecordAction> = new Set([
  'update',
  'lock',
  'adopt',
  'rename',
  'reactivate',
]);

/** One field an update changes: its value on the server before, and the one written. */
export interface FieldChange {
  field: string;
  from?: unknown;
  to?: unknown;
  /** Names of the ids in `from` and `to`, for lists of groups or users. */
  names?: Record<string, string>;
}

/** Cell values of one input record exactly as they came in (CSV text, or JSON values). */
export type InputColumns = Record<string, unknown>;

/** The one result every input record ends with. */
export interface RecordResult {
  /** 1-based record number in the upload. */
  row: number;
  /** Physical line of the record's start in a CSV upload. */
  line?: number;
  /** Row of the record in the first upload, for a retry or a re-uploaded report. */
  sourceRow?: number;
  /** Natural key (username, group name, ACL id or name), when known. */
  key?: string;
  action?: RecordAction;
  status: ResultStatus;
  /** Id generated or found on the admin server. */
  id?: string | number;
  errorCode?: ErrorCode | string;
  error?: string;
  /** Field the error is about, for validation failures. */
  field?: string;
  /** Calls to the admin server this record took part in. */
  attempts?: number;
  /** Fields this import changed, for updates. */
  changed?: string[];
  /** The field-level changes of an update: before and after. */
  changes?: FieldChange[];
  /**
   * A dry run's fingerprint of the record it planned against ("absent" when there was none):
   * `porter apply` writes only where the server still holds exactly that record.
   */
  basis?: string;
  warnings?: string[];
  /** A sync's record that is on the server and not in the file: it has no row in the upload. */
  serverOnly?: boolean;
  input: InputColumns;
}

/** Options chosen when the import was submitted; they travel with it. */
export interface ImportOptions {
  /**
   * The target (named admin server) the import is for, and its fingerprint when it was
   * submitted: a worker runs it against that target only, and refuses it when the target's
   * configuration changed since. Imports from before targets carry neither and mean `default`.
   */
  target?: string;
  targetFingerprint?: string;
  /** Where the target pointed then, credentials left out. */
  targetUrl?: string;
  resource: ResourceName;
  mode: ImportMode;
  batchSize: number;
  listSeparator: string;
  delimiter?: string;
  /** The upload's text encoding when it is not UTF-8 (a WHATWG label: windows-1252, utf-16le …). */
  encoding?: string;
  emptyAsClear: boolean;
  allowAdmin: boolean;
  /**
   * Accept usernames and group names that look like another one of the same upload (equal
   * under case folding, NFKC or a confusables skeleton). Default false: such a record fails
   * PORTER_KEY_LOOKALIKE.
   */
  allowLookalike?: boolean;
  /** Stop the import once this many records failed (a number, or a percentage like "5%"). */
  maxFailures?: string;
  /** How records are looked up: a bulk snapshot, one read each, or `auto` (the default). */
  lookup?: LookupMode;
  /** Plan only: every record gets its planned action, nothing is written. */
  dryRun?: boolean;
  /**
   * Send each batch as soon as its records are received and checked, instead of once the upload
   * is whole (docs/streaming.md). An upload that breaks off then ends `failed` after the batches
   * queued before the break; every other record is reported `unprocessed`. Not for a sync.
   */
  stream?: boolean;
  /** Sync only (mode `sync`): what happens to the server's records the file leaves out. */
  sync?: SyncOptions;
  /** An undo only: also turn back records changed on the server since the import undone. */
  force?: boolean;
  /** The directory the rows were read from (PORTER_SOURCES_FILE), and what the read found. */
  source?: ImportSourceInfo;
  /** Mapping file the upload was read with; a retry reads its records the same way. */
  mapping?: {
    columns: Record<string, string>;
    ignore: string[];
    defaults: Record<string, unknown>;
    /** Field → JSONata expression (docs/mapping.md); evaluated again by a retry, as the first time. */
    fields?: Record<string, string>;
    /** Value tables, inline (a table file was read when the import was submitted). */
    tables?: Record<string, { values: Record<string, unknown>; default?: unknown }>;
    when?: string;
    /** The anchor's expression and settings (docs/mapping.md#anchors). */
    anchor?: string;
    anchorKey?: string;
    join?: 'username' | 'email' | 'none';
    createInactive?: boolean;
  };
}

/** A directory read: its source, entries, the last full read's, and whether it was incremental. */
export interface ImportSourceInfo {
  name: string;
  entries: number;
  /** Entries of the last full read of the same source and resource, when there was one. */
  lastEntries?: number;
  /** Only entries changed since this mark were read (creates and updates, no deletions). */
  since?: string;
  durationMs: number;
}

/** An import's state as read before a call: the state, why, and the code of why. */
export interface ImportStateRead {
  state: ImportState;
  reason?: string;
  reasonCode?: string;
}

/** What porter keeps about an import, readable while it runs. */
export interface ImportInfo {
  id: string;
  state: ImportState;
  /** Why it failed, was cancelled or paused. */
  reason?: string;
  /**
   * The error code of why it failed, when one code says it: `PORTER_TARGET_UNREACHABLE` (the
   * target could not be reached or refused porter's credentials, and nothing was sent).
   */
  reasonCode?: string;
  options: ImportOptions;
  /** File name or source label. */
  source?: string;
  /** The import this one retries. */
  retryOf?: string;
  createdAt: string;
  updatedAt: string;
  /** When the whole upload was read, and its records staged or reported (state queued). */
  receivedAt?: string;
  finishedAt?: string;
  /** Records in the upload; known once it is received. */
  total: number;
  batches: number;
  counts: Record<ResultStatus, number>;
  /** Records with a result. */
  done: number;
  /** Succeeded or planned records per action (create, update, delete, unchanged). */
  actions: Partial<Record<RecordAction, number>>;
  /** A dry run's id, when this import applies it. */
  applyOf?: string;
  /** The import whose changes this one turns back (`porter undo`). */
  undoOf?: string;
  /** A sync: rows of the file that failed without a key that can be read (see SyncPlanInfo). */
  unnamedFailures?: number;
  /** Anchors that several rows of the upload carry → their rows (every one of them fails). */
  anchorsTwice?: Record<string, number[]>;
  /** Column order of the upload, for reports. */
  columns: string[];
  /**
   * JSON and NDJSON: the keys of later records that the first one lacks (its keys are
   * `columns`), in the order they first appear, at most MAX_MORE_COLUMNS; reports show them
   * after `columns`.
   */
  moreColumns?: string[];
  /** Final, and every record has its result: the report is complete. */
  settled: boolean;
  /** How the import looks records up, once its first batch was prepared. */
  lookup?: LookupInfo;
  /** A sync's plan of the server's records the file leaves out, once prepared. */
  sync?: SyncPlanInfo;
  /**
   * Why records did not succeed: per status (failed, unprocessed) and error code, how many, and
   * the first record's message. Most first.
   */
  problems?: ImportProblem[];
  /** The last reason the import was paused (the circuit breaker's), kept once it moved on. */
  pausedBecause?: string;
  /** A held sync that was approved: when (issue: who, once porter knows principals). */
  approvedAt?: string;
  /** A held sync that was approved: the import that wrote its plan. */
  writtenBy?: string;
  /** The import that turned back this one's changes (`porter undo`), the latest one. */
  undoneBy?: string;
  /**
   * The principal that started it (`token:<name>`, `oidc:<subject>`, `cli:<user>`), or the
   * schedule or watched folder that did (`schedule:<name>`, `watch:<dir>`), when known.
   */
  startedBy?: string;
  /** Who added the schedule or started the watch that started it, when known. */
  onBehalfOf?: string;
  /** The audit trail's `actionId` of the action that created it. */
  actionId?: string;
  /** Who approved or applied this plan, when, and its counts then. */
  approval?: ApprovalInfo;
}

/** Records of one status that ended with one error code. */
export interface ImportProblem {
  status: 'failed' | 'unprocessed';
  code: string;
  count: number;
  /** The first such record's message. */
  message?: string;
}

/** The approval of a held sync or the application of a dry run. */
export interface ApprovalInfo {
  by: string;
  at: string;
  /** The import that writes the plan. */
  applicationId?: string;
  counts: Record<ResultStatus, number>;
  actions: Partial<Record<RecordAction, number>>;
}

/** A valid record staged in Redis until its batch runs. */
export interface StagedRecord {
  row: number;
  line?: number;
  sourceRow?: number;
  input: InputColumns;
  record: Record<string, unknown>;
  warnings?: string[];
  /**
   * A sync's server record the file leaves out (`record` holds its key alone); `lookalikeOf`
   * names the file's key that looks like it, when there is one.
   */
  serverOnly?: { lookalikeOf?: string };
  /** The mapping's anchor and what it matched on the DAM when the upload was read. */
  anchor?: StagedAnchor;
}

/** What a sync does with a server record its file leaves out. */
export type MissingAction = 'lock' | 'delete' | 'ignore';
export const MISSING_ACTIONS: readonly MissingAction[] = ['lock', 'delete', 'ignore'];

/** A sync's options; defaults are filled in when the import is submitted (src/sync/sync-options.ts). */
export interface SyncOptions {
  /** Users: lock (default), delete or ignore. Groups: delete or ignore (default). */
  missing: MissingAction;
  /** Most locks and deletes allowed without approval: "N" or "N%" of the in-scope server records. */
  maxDeletes?: string;
  /** Canonical keys a sync never touches. */
  protect?: string[];
  /** Users: only members of this group count as on the server. */
  scopeGroup?: string;
  /** Only server records whose key matches this pattern count as on the server. */
  scopeMatch?: string;
}

/** What a sync's preparation found and decided about the records the file leaves out. */
export interface SyncPlanInfo {
  /** Server records in scope (the base of a percentage threshold). */
  inScope: number;
  /** In-scope server records absent from the file. */
  missing: number;
  /** Of them, would be locked / deleted (the count held against the threshold). */
  locks: number;
  deletes: number;
  /** Of them, left alone: protected, administrators, porter's own account, already locked. */
  spared: number;
  /** Most locks and deletes allowed. */
  threshold: number;
  /**
   * Rows of the file that failed without a key that can be read (a record too large to read,
   * a row with no key, a key computed by an expression that failed): the sync cannot tell
   * whether they name a record it would lock or delete.
   */
  unnamed?: number;
  /** The directory returned no entry where its last full read saw this many: held. */
  sourceEmptied?: number;
  /**
   * The plan passed the threshold, or would lock or delete while some of the file's rows name
   * no key (`unnamed`): the import plans only and ends `held`.
   */
  held: boolean;
  /** The held sync this import applies (approved). */
  approvedFrom?: string;
}

/** The source of the imports SCIM keeps: an hour's changes of one token, a held plan. */
export const SCIM_SOURCE = 'scim';
