/**
 * The producer's core: stream an upload through ingest, stage its valid records in Redis,
 * report its invalid ones, and release batch jobs only once the whole upload is in.
 * An upload that breaks midway sends nothing and ends `failed`. A streamed import (`stream`,
 * docs/streaming.md) is prepared as its upload starts and has its batches queued as their
 * records come in; one whose upload breaks off reports every record not queued `unprocessed`.
 */
import type { Readable } from 'node:stream';
import { PorterError } from '../errors/porter-error.js';
import {
  checkIngestOptions,
  ingest,
  type IngestItem,
  type IngestOptions,
  type InputFormat,
  type Mapping,
} from '../ingest/index.js';
import {
  FINAL_IMPORT_STATES,
  type ImportInfo,
  type ImportOptions,
  type ImportState,
  type RecordResult,
  type StagedRecord,
} from '../model/import.js';
import type { BatchRef } from '../execute/run-batch.js';
import {
  streamBatchRefs,
  streamBoundary,
  streamJobCount,
  streamJobs,
} from '../queue/import-queue.js';
import { checkStreamOption } from './stream-option.js';
import type { ImportStore } from '../results/import-store.js';
import type { KeyClaim, UploadKeys } from '../results/import-runtime.js';
import { lookalikeKey } from '../ingest/lookalike.js';
import { checksLookalikes } from '../snapshot/lookup-mode.js';
import { showValue } from '../ingest/coerce.js';
import { RESOURCES } from '../admin/resources.js';
import { failureLimitReason, knownTotal } from '../execute/failure-limit.js';
import { sleep } from '../execute/retry-policy.js';
import { naturalKey } from '../plan/natural-key.js';
import { WORK_ATTRIBUTES, withSpan, withWork } from '../observability/tracing.js';
import { isOutOfMemory, untilRoom, type RoomWatch } from '../redis/redis-full.js';

export interface SubmitImportRequest {
  options: ImportOptions;
  source: Readable | AsyncIterable<Uint8Array | string>;
  fileName?: string;
  contentType?: string;
  format?: InputFormat;
  mapping?: Mapping;
  retryOf?: string;
  /** Whose records these are besides the acting principal's (a retry: its original's starter). */
  onBehalfOf?: string;
  /**
   * Decides a valid record's result without staging it (a migration fails a record whose
   * reference did not migrate); undefined stages it as usual.
   */
  decide?: (item: Extract<IngestItem, { kind: 'record' }>) => RecordResult | undefined;
}

export interface SubmitImportDeps {
  store: ImportStore;
  keys: UploadKeys;
  /**
   * Where a full Redis is told. With it, the end of an upload Redis refused for want of memory
   * (its failure, or its being whole) is recorded once Redis has room; without it, not at all.
   */
  room?: RoomWatch;
  /** Queues the import's preparation, which reads the directory and then queues its batches. */
  enqueuePrepare: (importId: string) => Promise<void>;
  /** Queues batch jobs: a streamed import's, as their records come in (needed for one). */
  enqueueBatches?: (refs: Iterable<BatchRef>) => Promise<unknown>;
  /**
   * How a streamed import's claimed jobs are added again while the queue fails when its upload
   * ends: tries, and the first wait (doubling, at most 5 s). @defaultValue 10 tries from 200 ms
   */
  queueRetry?: { attempts: number; firstWaitMs: number };
  /** Called as soon as the import has an id, before the upload is read. */
  onCreated?: (info: ImportInfo) => void;
  /** Largest record in bytes (PORTER_MAX_RECORD_BYTES). @defaultValue 1 MiB */
  maxRecordBytes?: number;
  /**
   * The target's records of a resource, read only when the mapping calls `$unique`.
   * @defaultValue none: only the upload's own names count
   */
  directory?: (resource: ImportOptions['resource']) => AsyncIterable<Record<string, unknown>>;
}

/**
 * A chunk written to Redis at once: this many records, or this many bytes of input (big records
 * make small chunks). Two chunks at most are held, one read while the other is written.
 */
const STAGE_CHUNK = 2000;
const STAGE_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Receives an upload into a new import and queues its batches; returns the import as queued.
 * Traced as one span, whose trace the import's jobs carry on to the workers.
 */
export function submitImport(
  request: SubmitImportRequest,
  deps: SubmitImportDeps,
): Promise<ImportInfo> {
  const { options } = request;
  const attributes = {
    [WORK_ATTRIBUTES.target]: options.target ?? 'default',
    'porter.resource': options.resource,
    'porter.mode': options.mode,
  };
  return withSpan('porter.import.upload', { attributes }, async (span) => {
    const info = await receiveImport(request, deps, (importId) =>
      span.setAttribute(WORK_ATTRIBUTES.importId, importId),
    );
    span.setAttributes({
      'porter.records': info.total,
      'porter.import.state': info.state,
    });
    return info;
  });
}

async function receiveImport(
  request: SubmitImportRequest,
  deps: SubmitImportDeps,
  onId: (importId: string) => void,
): Promise<ImportInfo> {
  const { store } = deps;
  // an upload can break before ingest starts reading it; the error then surfaces when it reads
  if (isEmitter(request.source)) request.source.on('error', () => {});
  const mapping = request.mapping ?? request.options.mapping;
  const { options } = request;
  const ingestOptions: IngestOptions = {
    resource: options.resource,
    mode: options.mode,
    format: request.format,
    fileName: request.fileName,
    contentType: request.contentType,
    delimiter: options.delimiter,
    listSeparator: options.listSeparator,
    encoding: options.encoding,
    mapping,
    emptyAsClear: options.emptyAsClear,
    maxRecordBytes: deps.maxRecordBytes,
    directory: deps.directory && (() => deps.directory!(options.resource)),
    // a directory read whole that returned nothing, where the last full read saw entries: held
    emptySync: options.source !== undefined && (options.source.lastEntries ?? 0) > 0,
  };
  // a request that cannot work is refused before an import is stored for it
  checkIngestOptions(ingestOptions);
  checkStream(options, deps);
  const created = await store
    .create({
      options: { ...request.options, mapping },
      source: request.fileName,
      retryOf: request.retryOf,
      onBehalfOf: request.onBehalfOf,
    })
    .catch((error: unknown) => {
      throw isOutOfMemory(error) ? redisFull('no import was stored', error) : error;
    });
  deps.onCreated?.(created);
  const importId = created.id;
  onId(importId);
  // what follows is the import's work: its spans and its jobs carry its id
  return withWork({ importId, target: options.target }, () =>
    receiveAndQueue(importId, request, deps, ingestOptions),
  );
}

async function receiveAndQueue(
  importId: string,
  request: SubmitImportRequest,
  deps: SubmitImportDeps,
  ingestOptions: IngestOptions,
): Promise<ImportInfo> {
  const { store } = deps;
  const { options } = request;
  const receiving = new Receiving(importId, deps, options, request.decide);
  try {
    // a streamed import is prepared as its upload starts: its batches go as they fill
    if (options.stream === true) await deps.enqueuePrepare(importId);
    const run = ingest(request.source, ingestOptions);
    const { header, batches } = run;
    let columns: ColumnsSeen | undefined;
    for await (const batch of batches) {
      if (columns === undefined) {
        const { format, columns: first } = await header;
        await store.setColumns(importId, first);
        // a CSV row has its header's columns; a JSON record has keys of its own
        columns = new ColumnsSeen(first, format !== 'csv');
      }
      // a batch is taken in at once; only a full chunk waits (for the one before it)
      for (const item of batch) {
        columns.see(item.input);
        if (receiving.add(item)) await receiving.startWrite();
      }
      // a streamed upload's batch goes once its records are in, not once a chunk is full
      if (receiving.holdsStreamBatch()) await receiving.startWrite();
    }
    // an empty feed (a CSV header alone) has its columns too, for its (empty) report
    if (columns === undefined) await store.setColumns(importId, (await header).columns);
    await receiving.flush();
    // the first of rows that share an anchor was staged before the next was read: planning
    // fails it too (a streamed import's first may be sent already: the later rows fail alone)
    const twice = run.anchorsTwice();
    if (twice.size > 0 && options.stream !== true) await store.setAnchorsTwice(importId, twice);
    if (columns !== undefined && columns.more.length > 0) {
      await store.setMoreColumns(importId, columns.more);
    }
    // a sync holds its plan when rows it cannot tie to a key failed (see prepare-sync)
    if (receiving.unnamed > 0) await store.setUnnamedFailures(importId, receiving.unnamed);
  } catch (error) {
    await receiving.settle();
    if (options.stream === true) throw await receiving.endStream(error);
    if ((await store.getState(importId)) === 'cancelled') {
      // cancelled while it was being received: what was read gets its result, nothing is sent
      await deps.keys.release(importId);
      await receiving.endCancelled();
      throw new PorterError(
        'PORTER_CONFLICT',
        `import ${importId} was cancelled while its upload was received`,
        { cause: error },
      );
    }
    await deps.keys.release(importId);
    const full = isOutOfMemory(error);
    const reason = full
      ? REDIS_FULL_REASON
      : error instanceof Error
        ? error.message
        : String(error);
    // nothing of a failed upload is ever sent: its staged rows go at once (DEL is allowed when
    // Redis is full, and gives it room back), then its end is recorded, once Redis has room
    await store.dropStaged(importId);
    await whenRoom(deps, importId, () =>
      store.transition(importId, ['receiving'], 'failed', reason),
    );
    if (full) throw redisFull(`import ${importId} failed; its staged rows are removed`, error);
    throw error instanceof PorterError
      ? error
      : new PorterError('PORTER_UPLOAD_ABORTED', `the upload broke off: ${reason}`, {
          cause: error,
        });
  }
  if (options.stream === true) return receiving.endWhole();
  const batches = Math.ceil(receiving.staged / options.batchSize);
  // the upload is whole: that is recorded, and its preparation queued, once Redis has room
  const info = await whenRoom(deps, importId, () =>
    store.markReceived(importId, { total: receiving.total, batches }),
  );
  // rows refused while receiving may already pass --max-failures: then nothing is sent
  const tooMany = failureLimitReason(options.maxFailures, info.counts.failed, info.total);
  if (tooMany && (await store.transition(importId, ['queued'], 'failed', tooMany))) {
    await deps.keys.release(importId);
    await store.recordUnprocessed(importId, {
      errorCode: 'PORTER_FAILURE_LIMIT',
      error: `not sent: ${tooMany}`,
    });
    return (await store.get(importId)) ?? info;
  }
  // the upload's keys stay until the import is prepared: the snapshot keeps what they name; a
  // sync is always prepared, as it handles the server's records its file leaves out
  if (batches > 0 || options.mode === 'sync') {
    await whenRoom(deps, importId, () => deps.enqueuePrepare(importId));
  } else await deps.keys.release(importId);
  return info;
}

const ACTIVE: ImportState[] = ['queued', 'running', 'paused'];

/** Tries at adding a streamed import's claimed jobs when its upload ends (about 26 s). */
const QUEUE_RETRY = { attempts: 10, firstWaitMs: 200 };

/** Why a streamed import's rows whose jobs the queue never took were not sent. */
const QUEUE_AWAY = {
  errorCode: 'PORTER_UPLOAD_ABORTED',
  error: 'not sent: the queue did not take its batch (Redis refused the jobs for half a minute)',
};

/** Why the rows of a streamed import that ended were not sent, as its state tells. */
function endedWhy(info: ImportInfo): { errorCode: string; error: string } {
  const why = info.reason ? ` (${info.reason})` : '';
  if (info.state === 'cancelled') {
    return { errorCode: 'PORTER_CANCELLED', error: `not sent: the import was cancelled${why}` };
  }
  return {
    errorCode:
      info.reasonCode ??
      (info.reason?.startsWith('stopped:') ? 'PORTER_FAILURE_LIMIT' : 'PORTER_UPLOAD_ABORTED'),
    error: `not sent: the import ended ${info.state}${why}`,
  };
}

/** A streamed import needs a queue for its batches, and is not a sync. */
function checkStream(options: ImportOptions, deps: SubmitImportDeps): void {
  if (options.stream !== true) return;
  if (!deps.enqueueBatches) {
    throw new PorterError('PORTER_INTERNAL', 'a streamed import needs a queue for its batches');
  }
  checkStreamOption(options);
}

const REDIS_FULL_REASON =
  'Redis is full (maxmemory reached): it refused the upload; free memory in Redis or raise its maxmemory, then upload again';

function redisFull(what: string, cause: unknown): PorterError {
  return new PorterError(
    'PORTER_REDIS_FULL',
    `Redis is full (maxmemory reached) and refused the upload: ${what}. Free memory in Redis or raise its maxmemory, then upload again`,
    { cause },
  );
}

/** Runs a write of the import's, again once Redis has room while it refuses it for want of memory. */
function whenRoom<T>(
  deps: SubmitImportDeps,
  importId: string,
  write: () => Promise<T>,
): Promise<T> {
  return untilRoom(write, { room: deps.room, probe: () => deps.store.probeRoom(importId) });
}

/** Most keys beyond the first record's that a JSON upload's reports show as columns. */
export const MAX_MORE_COLUMNS = 1000;

/** The keys of a JSON upload's records beyond its first record's, in the order they appear. */
class ColumnsSeen {
  readonly more: string[] = [];
  private readonly seen: Set<string>;

  constructor(
    first: readonly string[],
    private readonly open: boolean,
  ) {
    this.seen = new Set(first);
  }

  see(input: Record<string, unknown>): void {
    if (!this.open || this.more.length >= MAX_MORE_COLUMNS) return;
    for (const key of Object.keys(input)) {
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.more.push(key);
      if (this.more.length >= MAX_MORE_COLUMNS) return;
    }
  }
}

/** Records read but not yet in Redis: to stage, and results to write. */
interface Chunk {
  stage: StagedRecord[];
  invalid: RecordResult[];
  /** Keys failed rows stand for besides their own (src/ingest/types.ts `alsoNames`). */
  alsoNamed: { key: string; row: number }[];
  /** About how many bytes of input the chunk holds. */
  bytes: number;
}

/**
 * The records of an upload on their way into Redis: valid ones staged, the rest reported. One
 * chunk is written while the next is read, so parsing and Redis overlap; chunks are written one
 * at a time, in upload order (the first of two equal keys is the one that counts).
 */
class Receiving {
  total = 0;
  staged = 0;
  /** A sync: failed rows that name no key. */
  unnamed = 0;
  /** Valid records read so far, to stage (before the repeats refused when written). */
  private staging = 0;
  /** A streamed import: the records whose jobs the producer claimed last, until they are added. */
  private claimed?: { from: number; to: number };
  private buffer: Chunk = { stage: [], invalid: [], alsoNamed: [], bytes: 0 };
  /** The chunk being written; what it holds until written, for a cancel to report. */
  private writing?: { chunk: Chunk; done: Promise<void> };

  constructor(
    private readonly importId: string,
    private readonly deps: SubmitImportDeps,
    private readonly options: ImportOptions,
    private readonly decide?: SubmitImportRequest['decide'],
  ) {}

  /** Takes one item in; true when the chunk is full and must be written (startWrite). */
  add(item: IngestItem): boolean {
    this.total++;
    const { buffer } = this;
    buffer.bytes += item.bytes ?? inputBytes(item.input);
    const decided = item.kind === 'record' ? this.decide?.(item) : undefined;
    if (decided) {
      buffer.invalid.push(decided);
    } else if (item.kind === 'record') {
      const staged: StagedRecord = {
        row: item.row,
        line: item.line,
        input: item.input,
        record: item.record,
      };
      const sourceRow = sourceRowOf(item.input);
      if (sourceRow !== undefined) staged.sourceRow = sourceRow;
      if (item.warnings.length > 0) staged.warnings = [...item.warnings];
      if (item.anchor !== undefined) staged.anchor = item.anchor;
      buffer.stage.push(staged);
      this.staging++;
    } else if (item.kind === 'skipped') {
      buffer.invalid.push({
        row: item.row,
        line: item.line,
        sourceRow: sourceRowOf(item.input),
        status: 'skipped',
        error: item.reason,
        attempts: 0,
        input: item.input,
      });
    } else {
      buffer.invalid.push(invalidResult(item));
      for (const key of item.alsoNames ?? []) buffer.alsoNamed.push({ key, row: item.row });
    }
    return (
      buffer.stage.length >= STAGE_CHUNK ||
      buffer.invalid.length >= STAGE_CHUNK ||
      buffer.bytes >= STAGE_CHUNK_BYTES
    );
  }

  /** A streamed import: whether the records read and not written fill a batch job. */
  holdsStreamBatch(): boolean {
    if (this.options.stream !== true) return false;
    const { batchSize } = this.options;
    const written = this.staging - this.buffer.stage.length;
    return streamBoundary(this.staging, batchSize) > streamBoundary(written, batchSize);
  }

  /** Writes everything read so far, and waits until it is written. */
  async flush(): Promise<void> {
    await this.startWrite();
    await this.drain();
  }

  /** Waits for the chunk being written, whatever becomes of it (before a cancel is reported). */
  async settle(): Promise<void> {
    await this.writing?.done.catch(() => undefined);
  }

  /** Starts writing the buffer once the chunk before it is written. */
  async startWrite(): Promise<void> {
    await this.drain();
    const chunk = this.buffer;
    this.buffer = { stage: [], invalid: [], alsoNamed: [], bytes: 0 };
    const done = this.write(chunk);
    // its failure surfaces at the next drain
    done.catch(() => undefined);
    this.writing = { chunk, done };
  }

  private async drain(): Promise<void> {
    if (!this.writing) return;
    await this.writing.done;
    this.writing = undefined;
  }

  /**
   * Stages a chunk's records and reports its invalid ones. A key seen before makes a record
   * invalid (deletes may repeat harmlessly), and so does a username or group name that looks
   * like an earlier, different one, unless the import allows look-alikes.
   */
  private async write(chunk: Chunk): Promise<void> {
    const { options } = this;
    const { store } = this.deps;
    // a second record with the same key is refused (deletes may repeat harmlessly), and so is a
    // key that looks like another. Every key is claimed: the snapshot keeps the server records
    // the upload names
    const checkLookalikes = options.resource !== 'acls' && options.allowLookalike !== true;
    const { stage } = chunk;
    if (stage.length > 0) {
      const keys = new Array<string>(stage.length);
      const rows = new Array<number>(stage.length);
      const lookalikes = checkLookalikes ? new Array<string>(stage.length) : undefined;
      for (let index = 0; index < stage.length; index++) {
        const key = naturalKey(options.resource, stage[index]!.record);
        keys[index] = key;
        rows[index] = stage[index]!.row;
        if (lookalikes) lookalikes[index] = key === '' ? '' : lookalikeKey(key);
      }
      const claims = await this.deps.keys.claimEach(
        this.importId,
        { keys, rows, lookalikes },
        // an import whose preparation compares look-alikes finds its keys in their forms' hash;
        // a sync keeps them in the keys hash too, so an earlier worker never reads a sync's
        // file as leaving out keys it carries
        {
          refuseRepeats: options.mode !== 'delete',
          keysToo: options.mode === 'sync' || !checksLookalikes(options),
        },
      );
      let unique = stage;
      for (let index = 0; index < stage.length; index++) {
        const claim = claims[index]!;
        if (claim.kind === 'first') {
          if (unique !== stage) unique.push(stage[index]!);
        } else {
          // the first refused record: the ones before it are kept, the rest sorted from here
          if (unique === stage) unique = stage.slice(0, index);
          chunk.invalid.push(claimResult(stage[index]!, keys[index]!, claim, options));
        }
      }
      chunk.stage = unique;
      // a renamed record's key on the server is named too: the snapshot keeps it, and a sync
      // never takes it for one the file leaves out
      const renamed = unique.flatMap((staged) => {
        const held = staged.anchor?.key;
        return held !== undefined && held !== naturalKey(options.resource, staged.record)
          ? [{ key: held, row: staged.row }]
          : [];
      });
      if (renamed.length > 0) {
        await this.deps.keys.claimKeys(this.importId, renamed, { refuseRepeats: false });
      }
    }
    // the refused rows first, cleared only once written: a write that failed leaves them for
    // endCancelled/endStream
    const { invalid } = chunk;
    if (invalid.length > 0 && options.mode === 'sync') {
      // a key the file names, even in a record refused, is never one the file leaves out
      const named = invalid.filter((result) => result.key !== undefined && result.key !== '');
      for (const result of invalid) {
        if (result.status === 'failed' && (result.key === undefined || result.key === '')) {
          this.unnamed++;
        }
      }
      await this.deps.keys.claimKeys(
        this.importId,
        [...named.map((result) => ({ key: result.key!, row: result.row })), ...chunk.alsoNamed],
        { refuseRepeats: false },
      );
    }
    if (invalid.length > 0) {
      const { info } = await store.recordResults(this.importId, invalid);
      chunk.invalid = [];
      // a streamed import whose refused rows pass a count limit stops before the chunk's valid
      // rows are staged: they, and every row after them, are not sent
      const tooMany =
        options.stream === true &&
        failureLimitReason(options.maxFailures, info.counts.failed, knownTotal(info));
      if (tooMany) {
        await store.transition(this.importId, ['receiving', 'paused'], 'failed', tooMany);
      }
    }
    if (chunk.stage.length > 0) {
      await store.stage(this.importId, chunk.stage);
      this.staged += chunk.stage.length;
    }
    // cleared only once staged: after a refusal (a cancel) they still need their results
    chunk.stage = [];
    // the chunk's records are all in Redis: those that fill jobs go
    if (options.stream === true) await this.queueStream();
  }

  /** A streamed import: queues the batches whose records are in (and that it claims). */
  private async queueStream(): Promise<void> {
    // a claim whose jobs were not added (the queue failed) is added first: no other process
    // adds them
    await this.addClaimed();
    const { batchSize } = this.options;
    this.claimed = await this.deps.store.claimStream(this.importId, streamJobs(batchSize));
    await this.addClaimed();
  }

  /** Adds the jobs of the producer's last claim, unless they were added. */
  private async addClaimed(): Promise<void> {
    const claimed = this.claimed;
    if (!claimed) return;
    if (claimed.to > claimed.from) {
      const { batchSize } = this.options;
      await this.deps.enqueueBatches!(
        streamBatchRefs(this.importId, claimed.from, claimed.to, batchSize),
      );
    }
    this.claimed = undefined;
  }

  /** A streamed upload is whole: it learns its total, and its last batches are queued. */
  async endWhole(): Promise<ImportInfo> {
    const { store } = this.deps;
    const batches = streamJobCount(this.staged, this.options.batchSize);
    const info = await whenRoom(this.deps, this.importId, () =>
      store.markReceived(this.importId, { total: this.total, batches }),
    );
    await this.deps.keys.release(this.importId);
    // a percentage of failures is checked once the total is known: past it, what was not
    // queued is not sent
    const tooMany = failureLimitReason(this.options.maxFailures, info.counts.failed, info.total);
    if (tooMany) await store.transition(this.importId, ACTIVE, 'failed', tooMany);
    const { batchSize } = this.options;
    // a claim not added yet first, then the rest (once the total is known, all of it)
    let unqueued = await this.addClaimedPersistently();
    if (unqueued === undefined) {
      this.claimed = await whenRoom(this.deps, this.importId, () =>
        store.claimStream(this.importId, streamJobs(batchSize)),
      );
      unqueued = await this.addClaimedPersistently();
    }
    const after = await store.get(this.importId);
    if (unqueued !== undefined) {
      // the queue stayed away: nothing more is claimed, and the rows of the jobs it never took,
      // and those claimed by no one, are reported
      const upTo = unqueued.to;
      const claimedUpTo = await whenRoom(this.deps, this.importId, () =>
        store.markBroken(this.importId, QUEUE_AWAY.error.replace(/^not sent: /, '')),
      );
      await whenRoom(this.deps, this.importId, async () => {
        await store.recordUnprocessed(this.importId, QUEUE_AWAY, unqueued.from, upTo);
        await store.recordUnprocessed(this.importId, QUEUE_AWAY, claimedUpTo);
      });
    } else if (after && FINAL_IMPORT_STATES.has(after.state) && !after.settled) {
      // ended before its last batches were queued (cancelled, a limit passed, its target
      // refused): the rows no queued batch answers for are reported now, or it would never settle
      await whenRoom(this.deps, this.importId, () =>
        store.recordUnprocessed(this.importId, endedWhy(after)),
      );
    }
    return (await store.get(this.importId)) ?? info;
  }

  /**
   * A streamed upload ended before it was whole (it broke off, or the import was cancelled or
   * ended meanwhile): no batch is queued from now on, the batches queued before run on (they
   * stop by themselves when the import ended), and every other record read gets a result naming
   * why it was not sent. Returns the error to throw.
   */
  async endStream(error: unknown): Promise<PorterError> {
    const { store } = this.deps;
    const importId = this.importId;
    const info = await store.get(importId);
    const ended = info !== undefined && FINAL_IMPORT_STATES.has(info.state) ? info : undefined;
    const full = isOutOfMemory(error);
    const reason = full
      ? REDIS_FULL_REASON
      : ended
        ? `the import ended ${ended.state}${ended.reason ? ` (${ended.reason})` : ''}`
        : `the upload broke off after row ${this.total}: ${error instanceof Error ? error.message : String(error)}`;
    const claimedUpTo = await whenRoom(this.deps, importId, () =>
      store.markBroken(importId, reason),
    );
    // the jobs the producer claimed go to the queue, or their rows would never end; those of
    // jobs the queue never took are reported with the rest (no one claims after them now)
    const unqueued = await this.addClaimedPersistently();
    const queued = claimedUpTo - (unqueued ? unqueued.to - unqueued.from : 0);
    const why = ended
      ? endedWhy(ended)
      : { errorCode: 'PORTER_UPLOAD_ABORTED', error: `not sent: ${reason}` };
    await whenRoom(this.deps, importId, async () => {
      await this.recordInHand(why);
      if (unqueued) await store.recordUnprocessed(importId, QUEUE_AWAY, unqueued.from, unqueued.to);
      await store.recordUnprocessed(importId, why, claimedUpTo);
      await store.markReceived(importId, {
        total: this.total,
        batches: streamJobCount(queued, this.options.batchSize),
      });
    });
    await this.deps.keys.release(importId);
    const sent = `${queued} records were queued to be sent before it; the others are reported unprocessed`;
    if (full) return redisFull(`import ${importId} stopped; ${sent}`, error);
    if (ended) {
      return new PorterError('PORTER_CONFLICT', `import ${importId}: ${reason}; ${sent}`, {
        cause: error,
      });
    }
    // a refusal of the upload keeps its code (too large, a field after the file part …)
    if (error instanceof PorterError) {
      return new PorterError(error.code, `${error.message}; import ${importId}: ${sent}`, {
        cause: error,
        details: error.details,
      });
    }
    return new PorterError('PORTER_UPLOAD_ABORTED', `import ${importId}: ${reason}; ${sent}`, {
      cause: error,
    });
  }

  /**
   * Adds the producer's last claim, trying again while the queue fails (about half a minute):
   * its rows have no other way to a result. Returns undefined once added, or, when the queue
   * stayed away, the claim's records: the caller reports them (a job of them the queue took
   * after all finds its rows answered and sends nothing).
   */
  private async addClaimedPersistently(): Promise<{ from: number; to: number } | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        await whenRoom(this.deps, this.importId, () => this.addClaimed());
        return undefined;
      } catch {
        const retry = this.deps.queueRetry ?? QUEUE_RETRY;
        if (attempt >= retry.attempts) {
          const claimed = this.claimed!;
          this.claimed = undefined;
          return claimed;
        }
        const wait = Math.min(5_000, retry.firstWaitMs * 2 ** (attempt - 1));
        await sleep(wait);
      }
    }
  }

  /** Results for the records read but not in Redis yet: their own, or `unprocessed` with `why`. */
  private async recordInHand(why: { errorCode: string; error: string }): Promise<void> {
    const chunks = this.writing ? [this.writing.chunk, this.buffer] : [this.buffer];
    const unsent = chunks
      .flatMap((chunk) => chunk.stage)
      .map((record) => ({
        row: record.row,
        line: record.line,
        status: 'unprocessed' as const,
        ...why,
        attempts: 0,
        input: record.input,
      }));
    const results = [...chunks.flatMap((chunk) => chunk.invalid), ...unsent];
    if (results.length > 0) await this.deps.store.recordResults(this.importId, results);
    // cleared once written: a write Redis refused for want of memory is made again whole
    this.writing = undefined;
    this.buffer = { stage: [], invalid: [], alsoNamed: [], bytes: 0 };
  }

  /** After a cancel: every record read so far gets a result, and the import learns its total. */
  async endCancelled(): Promise<void> {
    const { store } = this.deps;
    const why = {
      errorCode: 'PORTER_CANCELLED',
      error: 'not sent: the import was cancelled while its upload was received',
    };
    await this.recordInHand(why);
    await store.markReceived(this.importId, { total: this.total, batches: 0 });
    await store.recordUnprocessed(this.importId, why);
  }
}

/** About the size of a record's input: its text, counted without parsing anything again. */
function inputBytes(input: Record<string, unknown>): number {
  let bytes = 0;
  for (const key in input) {
    const value = input[key];
    bytes +=
      key.length +
      (typeof value === 'string' ? value.length : (JSON.stringify(value)?.length ?? 0));
  }
  return bytes;
}

/**
 * The row in the first upload of a record that comes back in a re-uploaded report or a retry:
 * its `porter_sourceRow`, else its `porter_row` column.
 */
function sourceRowOf(input: Record<string, unknown>): number | undefined {
  const value = Number(input.porter_sourceRow || input.porter_row);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function invalidResult(item: Extract<IngestItem, { kind: 'invalid' }>): RecordResult {
  return {
    row: item.row,
    line: item.line,
    sourceRow: sourceRowOf(item.input),
    key: item.key,
    status: 'failed',
    errorCode: item.errorCode,
    field: item.field,
    error: item.error,
    attempts: 0,
    input: item.input,
  };
}

function isEmitter(source: unknown): source is NodeJS.EventEmitter {
  return typeof (source as NodeJS.EventEmitter).on === 'function';
}

/** The result of a record whose key was given before, or looks like one given before. */
function claimResult(
  record: StagedRecord,
  key: string,
  claim: Exclude<KeyClaim, { kind: 'first' }>,
  options: ImportOptions,
): RecordResult {
  const field = RESOURCES[options.resource].keyField;
  const base = {
    row: record.row,
    line: record.line,
    sourceRow: record.sourceRow,
    key,
    status: 'failed' as const,
    field,
    attempts: 0,
    input: record.input,
  };
  if (claim.kind === 'repeat') {
    return {
      ...base,
      errorCode: 'PORTER_ROW_INVALID',
      error: `duplicate of row ${claim.row}: the upload gives ${showValue(key)} twice; merge the two rows`,
    };
  }
  return {
    ...base,
    errorCode: 'PORTER_KEY_LOOKALIKE',
    error:
      `field "${field}": ${showValue(key)} looks like ${showValue(claim.key)} of row ${claim.row} ` +
      '(the same under case folding, NFKC or look-alike letters); rename one, or import with ' +
      'allowLookalike to keep both',
  };
}
