/** How import state, results and staged records are written as Redis strings and read back. */
import {
  RECORD_ACTIONS,
  RESULT_STATUSES,
  type ImportInfo,
  type ImportOptions,
  type ImportProblem,
  type ImportState,
  type RecordResult,
  type ResultStatus,
  type StagedRecord,
} from '../model/import.js';
import { RESOURCES } from '../admin/resources.js';
import { packSizeFor } from './staged-packs.js';

/** Meta fields porter keeps beside ImportInfo; not part of the shared vocabulary. */
export interface ImportMetaExtras {
  /** When the import first went `running`. */
  startedAt?: string;
  /** Final, and every record has a result (or it failed while receiving). */
  settled: boolean;
  /** Highest row number with a result, for reading results before the total is known. */
  maxRow: number;
  /** The total as stored: -1 until the upload is received. */
  storedTotal: number;
}

/** A Redis hash reply (HGETALL), flat [field, value, ...] from Lua or an object from ioredis. */
export function hashFromReply(reply: unknown): Record<string, string> {
  if (!Array.isArray(reply)) return (reply ?? {}) as Record<string, string>;
  const hash: Record<string, string> = {};
  for (let index = 0; index + 1 < reply.length; index += 2) {
    hash[String(reply[index])] = String(reply[index + 1]);
  }
  return hash;
}

/** Meta hash fields for a new import. */
export function encodeNewMeta(init: {
  id: string;
  options: ImportOptions;
  source?: string;
  retryOf?: string;
  applyOf?: string;
  undoOf?: string;
  columns?: string[];
  startedBy?: string;
  onBehalfOf?: string;
  actionId?: string;
  now: string;
}): string[] {
  const fields = [
    'id',
    init.id,
    'state',
    'receiving',
    'options',
    JSON.stringify(init.options),
    'createdAt',
    init.now,
    'updatedAt',
    init.now,
    'total',
    '-1',
    'batches',
    '0',
    'maxRow',
    '0',
    'columns',
    JSON.stringify(init.columns ?? []),
    // staged records are kept a batch per list element (staged-packs.ts)
    'stagedPack',
    String(packSizeFor(init.options.batchSize)),
    'staged',
    '0',
  ];
  // the scripts read it: a streamed import's batches go while its upload is received
  if (init.options.stream === true) fields.push('stream', '1');
  if (init.source !== undefined) fields.push('source', init.source);
  if (init.retryOf !== undefined) fields.push('retryOf', init.retryOf);
  if (init.applyOf !== undefined) fields.push('applyOf', init.applyOf);
  if (init.undoOf !== undefined) fields.push('undoOf', init.undoOf);
  if (init.startedBy !== undefined) fields.push('startedBy', init.startedBy);
  if (init.onBehalfOf !== undefined) fields.push('onBehalfOf', init.onBehalfOf);
  if (init.actionId !== undefined) fields.push('actionId', init.actionId);
  if (init.options.dryRun) fields.push('keepStaged', '1');
  // a sync settles only once its preparation added the server's records its file leaves out
  if (init.options.mode === 'sync') fields.push('syncPending', '1');
  return fields;
}

function countsFromHash(counts: Record<string, string>): Record<ResultStatus, number> {
  const parsed = {} as Record<ResultStatus, number>;
  for (const status of RESULT_STATUSES) parsed[status] = Number(counts[status] ?? 0) || 0;
  return parsed;
}

function actionsFromHash(counts: Record<string, string>): ImportInfo['actions'] {
  const actions: ImportInfo['actions'] = {};
  for (const action of RECORD_ACTIONS) {
    const value = Number(counts[`action:${action}`] ?? 0);
    if (value > 0) actions[action] = value;
  }
  return actions;
}

/** ImportInfo from the meta and counts hashes; undefined when the import does not exist. */
export function decodeImportInfo(
  meta: Record<string, string>,
  countsHash: Record<string, string>,
): ImportInfo | undefined {
  if (meta.id === undefined || meta.state === undefined) return undefined;
  const counts = countsFromHash(countsHash);
  const total = Number(meta.total ?? -1);
  const info: ImportInfo = {
    id: meta.id,
    state: meta.state as ImportState,
    options: JSON.parse(meta.options ?? '{}') as ImportOptions,
    createdAt: meta.createdAt ?? '',
    updatedAt: meta.updatedAt ?? meta.createdAt ?? '',
    // The shared type has no "unknown" total; 0 while receiving, the state says why.
    total: total < 0 ? 0 : total,
    batches: Number(meta.batches ?? 0),
    counts,
    done: RESULT_STATUSES.reduce((sum, status) => sum + counts[status], 0),
    actions: actionsFromHash(countsHash),
    columns: decodeColumns(meta.columns),
    settled: meta.settled === '1',
  };
  if (meta.moreColumns !== undefined) info.moreColumns = decodeColumns(meta.moreColumns);
  if (meta.unnamedFailures !== undefined) info.unnamedFailures = Number(meta.unnamedFailures);
  if (meta.anchorsTwice !== undefined) {
    info.anchorsTwice = JSON.parse(meta.anchorsTwice) as Record<string, number[]>;
  }
  if (meta.reason !== undefined) info.reason = meta.reason;
  if (meta.reasonCode !== undefined) info.reasonCode = meta.reasonCode;
  if (meta.source !== undefined) info.source = meta.source;
  if (meta.retryOf !== undefined) info.retryOf = meta.retryOf;
  if (meta.applyOf !== undefined) info.applyOf = meta.applyOf;
  if (meta.undoOf !== undefined) info.undoOf = meta.undoOf;
  if (meta.startedBy !== undefined) info.startedBy = meta.startedBy;
  if (meta.onBehalfOf !== undefined) info.onBehalfOf = meta.onBehalfOf;
  if (meta.actionId !== undefined) info.actionId = meta.actionId;
  if (meta.approval !== undefined)
    info.approval = JSON.parse(meta.approval) as ImportInfo['approval'];
  if (meta.receivedAt !== undefined) info.receivedAt = meta.receivedAt;
  if (meta.finishedAt !== undefined) info.finishedAt = meta.finishedAt;
  if (meta.lookup !== undefined) info.lookup = JSON.parse(meta.lookup) as ImportInfo['lookup'];
  if (meta.sync !== undefined) info.sync = JSON.parse(meta.sync) as ImportInfo['sync'];
  if (meta.pausedBecause !== undefined) info.pausedBecause = meta.pausedBecause;
  if (meta.approvedAt !== undefined) info.approvedAt = meta.approvedAt;
  if (meta.writtenBy !== undefined) info.writtenBy = meta.writtenBy;
  if (meta.undoneBy !== undefined) info.undoneBy = meta.undoneBy;
  const problems = problemsFromHashes(meta, countsHash);
  if (problems.length > 0) info.problems = problems;
  return info;
}

/** Failed and unprocessed records per code, with the first message of each; most first. */
function problemsFromHashes(
  meta: Record<string, string>,
  counts: Record<string, string>,
): ImportProblem[] {
  const problems: ImportProblem[] = [];
  for (const [field, value] of Object.entries(counts)) {
    const match = /^code:(failed|unprocessed):(.+)$/.exec(field);
    const count = Number(value);
    if (!match || !(count > 0)) continue;
    const status = match[1] as ImportProblem['status'];
    const code = match[2]!;
    const message = meta[`why:${status}:${code}`];
    problems.push(message ? { status, code, count, message } : { status, code, count });
  }
  return problems.sort(
    (a, b) => a.status.localeCompare(b.status) || b.count - a.count || a.code.localeCompare(b.code),
  );
}

export function decodeMetaExtras(meta: Record<string, string>): ImportMetaExtras {
  const extras: ImportMetaExtras = {
    settled: meta.settled === '1',
    maxRow: Number(meta.maxRow ?? 0),
    storedTotal: Number(meta.total ?? -1),
  };
  if (meta.startedAt !== undefined) extras.startedAt = meta.startedAt;
  return extras;
}

/**
 * What a stored result leaves out because the import knows it: the upload's columns (an input
 * that holds exactly them, in order, as every CSV row does, is kept as its values alone) and
 * the resource's key field (a key equal to the input's value there is not repeated).
 */
export interface ResultLayout {
  columns: readonly string[];
  keyField?: string;
}

/** The layout of an import's results, from its meta hash. */
export function resultLayout(meta: Record<string, string | undefined>): ResultLayout {
  const resource = (JSON.parse(meta.options ?? '{}') as Partial<ImportOptions>).resource;
  return layoutFor(decodeColumns(meta.columns), resource);
}

/** The layout of an import's results from its columns and resource, as the import knows them. */
export function layoutFor(
  columns: readonly string[],
  resource: ImportOptions['resource'] | undefined,
): ResultLayout {
  const keyField = resource && RESOURCES[resource]?.keyField;
  return keyField ? { columns, keyField } : { columns };
}

/**
 * A result as stored: without `row` (its place says it), with `s` (the status) first so that a
 * status filter reads it without parsing the whole JSON, and short names for what every result
 * has. Left out when they are what the row implies: `line` (row + 1, a CSV's header line
 * before it), `attempts` (1), the key (the input's key field). A field left out for that reason
 * but absent from the result is written as null.
 */
export function encodeResult(result: RecordResult, layout?: ResultLayout): string {
  const { row, status, input, action, key, line, attempts, ...rest } = result;
  const stored: Record<string, unknown> = { s: status };
  if (action !== undefined) stored.a = action;
  const impliedKey = keyFromInput(input, layout?.keyField);
  if (key !== impliedKey) stored.k = key ?? null;
  if (line !== row + 1) stored.l = line ?? null;
  if (attempts !== 1) stored.n = attempts ?? null;
  Object.assign(stored, rest);
  const values = layout && valuesInOrder(input, layout.columns);
  if (values) stored.in = values;
  else stored.input = input;
  return JSON.stringify(stored);
}

function keyFromInput(
  input: RecordResult['input'] | undefined,
  keyField: string | undefined,
): string | undefined {
  const value = keyField && input ? input[keyField] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The input's values when its keys are exactly these columns, in order; else undefined. */
function valuesInOrder(
  input: RecordResult['input'] | undefined,
  columns: readonly string[],
): unknown[] | undefined {
  if (!input || columns.length === 0) return undefined;
  const values: unknown[] = [];
  let index = 0;
  for (const key in input) {
    // a `__proto__` column could not be given back by plain assignment: kept as an object
    if (key !== columns[index] || key === '__proto__') return undefined;
    values.push(input[key]);
    index++;
  }
  return index === columns.length ? values : undefined;
}

const STATUS_PREFIX = '{"s":"';

/** The status of a stored result, read from its first characters. */
export function storedStatus(json: string): ResultStatus {
  if (json.startsWith(STATUS_PREFIX)) {
    const end = json.indexOf('"', STATUS_PREFIX.length);
    return json.slice(STATUS_PREFIX.length, end) as ResultStatus;
  }
  return (JSON.parse(json) as { s: ResultStatus }).s;
}

/** The upload's columns as the meta hash keeps them (none before the first record is read). */
export function decodeColumns(json: string | null | undefined): string[] {
  return JSON.parse(json ?? '[]') as string[];
}

type StoredResult = Omit<
  RecordResult,
  'row' | 'status' | 'action' | 'key' | 'line' | 'attempts'
> & {
  s: ResultStatus;
  a?: RecordResult['action'];
  k?: string | null;
  l?: number | null;
  n?: number | null;
  in?: unknown[];
};

/** A stored result, given back whole with the import's layout (see encodeResult). */
export function decodeResult(row: number, json: string, layout: ResultLayout): RecordResult {
  const { s, a, k, l, n, in: values, ...rest } = JSON.parse(json) as StoredResult;
  const result = { row } as RecordResult;
  const line = l === undefined ? row + 1 : l;
  if (line !== null) result.line = line;
  if (a !== undefined) result.action = a;
  result.status = s;
  Object.assign(result, rest);
  const attempts = n === undefined ? 1 : n;
  if (attempts !== null) result.attempts = attempts;
  if (Array.isArray(values)) result.input = inputOf(values, layout.columns);
  const key = k === undefined ? keyFromInput(result.input, layout.keyField) : k;
  if (key !== null && key !== undefined) result.key = key;
  return result;
}

/**
 * A staged record as kept: `r` the row, `l` the line when not row + 1, the input as values of the
 * import's columns when it holds exactly them (`in`), and the record itself (`rec`) only when
 * it is not the input as given (a CSV row of plain text fields is).
 */
export function encodeStaged(staged: StagedRecord, layout?: ResultLayout): string {
  const { row, line, input, record } = staged;
  // a plain row, its own record with nothing beside it (most of an upload): written directly,
  // as the general way writes it
  if (record === input && line === row + 1 && layout && Object.keys(staged).length === 4) {
    const values = valuesInOrder(input, layout.columns);
    if (values) return `{"r":${row},"in":${JSON.stringify(values)}}`;
  }
  return encodeStagedObject(staged, layout);
}

function encodeStagedObject(staged: StagedRecord, layout?: ResultLayout): string {
  const { row, line, input, record, ...rest } = staged;
  const stored: Record<string, unknown> = { r: row };
  if (line !== row + 1) stored.l = line ?? null;
  Object.assign(stored, rest);
  const values = layout && valuesInOrder(input, layout.columns);
  if (values) stored.in = values;
  else stored.input = input;
  if (!sameFields(record, input)) stored.rec = record;
  return JSON.stringify(stored);
}

/** The record has the input's fields, in its order, with the same values. */
function sameFields(record: Record<string, unknown>, input: Record<string, unknown>): boolean {
  // a plain row of text fields is its own record (src/ingest/record-builder.ts)
  if (record === input) return true;
  const inputKeys = Object.keys(input);
  const recordKeys = Object.keys(record);
  if (inputKeys.length !== recordKeys.length) return false;
  for (let index = 0; index < inputKeys.length; index++) {
    const key = inputKeys[index]!;
    if (recordKeys[index] !== key || record[key] !== input[key]) return false;
  }
  return true;
}

type StoredStaged = Omit<StagedRecord, 'row' | 'line' | 'input' | 'record'> & {
  r: number;
  l?: number | null;
  in?: unknown[];
  input?: StagedRecord['input'];
  rec?: StagedRecord['record'];
};

export function decodeStaged(json: string, layout: ResultLayout): StagedRecord {
  const parsed = JSON.parse(json) as StoredStaged | StagedRecord;
  // kept by a version before this form: as it was
  if ('row' in parsed) return parsed;
  if (parsed.in !== undefined && isPlainStaged(parsed)) {
    // a plain row (encodeStaged's quick form): its values and nothing else
    const input = inputOf(parsed.in, layout.columns);
    return { row: parsed.r, line: parsed.r + 1, input, record: { ...input } };
  }
  const { r: row, l, in: values, input, rec, ...rest } = parsed;
  const staged = { row } as StagedRecord;
  const line = l === undefined ? row + 1 : l;
  if (line !== null) staged.line = line;
  Object.assign(staged, rest);
  staged.input = values ? inputOf(values, layout.columns) : (input ?? {});
  staged.record = rec ?? { ...staged.input };
  return staged;
}

/** A stored record of `r` and `in` alone. */
function isPlainStaged(parsed: StoredStaged): boolean {
  let fields = 0;
  for (const field in parsed) {
    if (field !== 'r' && field !== 'in') return false;
    fields++;
  }
  return fields === 2;
}

function inputOf(values: unknown[], columns: readonly string[]): RecordResult['input'] {
  const input: Record<string, unknown> = {};
  for (let index = 0; index < columns.length; index++) input[columns[index]!] = values[index];
  return input as RecordResult['input'];
}
