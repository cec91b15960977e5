/**
 * Import state, staged records and per-record results in Redis. Every state change and every
 * result write is one Lua script (import-scripts.ts), so workers on any number of machines can
 * share an import without counting a row twice or racing a state change.
 */
import type { Redis } from 'ioredis';
import type { ErrorCode } from '../errors/codes.js';
import { PorterError } from '../errors/porter-error.js';
import {
  FINAL_IMPORT_STATES,
  type ImportInfo,
  type ImportOptions,
  type ImportState,
  type ImportStateRead,
  type LookupInfo,
  type RecordResult,
  type ResultStatus,
  type StagedRecord,
  type SyncPlanInfo,
} from '../model/import.js';
import { chunks } from './chunks.js';
import {
  decodeImportInfo,
  decodeResult,
  layoutFor,
  resultLayout,
  type ResultLayout,
  decodeStaged,
  encodeNewMeta,
  encodeStaged,
  hashFromReply,
} from './import-codec.js';
import { currentActor } from '../auth/acting.js';
import { importKeyBase } from '../redis/key-tags.js';
import { importNotFound, importStateConflict } from './import-errors.js';
import { IMPORT_ID_PATTERN, isValidImportId, newImportId } from './import-id.js';
import {
  importEventsChannel,
  importIndexKey,
  importKeyList,
  importKeys,
  sentRowsKeys,
  uploadKeysKey,
  uploadLookalikesKey,
  type ImportKeys,
} from './import-keys.js';
import {
  countImportStates,
  listImports,
  listImportsFrom,
  listImportsPage,
  pruneImportIndex,
  readImportInfo,
  readImportProgress,
  readResults,
  type ImportPage,
  type ImportProgress,
} from './import-reader.js';
import {
  defineImportScripts,
  queueImportScript,
  runImportScript,
  type ScriptArg,
} from './import-scripts.js';
import { RESULT_CHUNK, findMissingRows, writeResults } from './result-writer.js';
import { bucketOf, compactBuckets, compactFields, readBuckets } from './row-buckets.js';
import { packRange, packRecords, unpackRecords } from './staged-packs.js';
import { missingListKey, snapshotKeyList, snapshotKeys } from '../snapshot/snapshot-keys.js';

export interface ImportStoreOptions {
  /** Connection used for every command; the store registers its Lua scripts on it. */
  redis: Redis;
  /** Key prefix (PORTER_PREFIX). */
  prefix: string;
  /** Seconds an import's keys live after its last write. Default 7 days. */
  ttlSeconds?: number;
}

export interface CreateImportInit {
  /** A chosen id; default a new sortable one. */
  id?: string;
  options: ImportOptions;
  source?: string;
  retryOf?: string;
  /** The dry run this import applies. */
  applyOf?: string;
  /** The import whose changes this one turns back. */
  undoOf?: string;
  columns?: string[];
  /** Who starts it. @defaultValue the principal of the request or command in progress */
  startedBy?: string;
  /**
   * Whose work it carries besides: a retry carries its original's starter, who then does not
   * approve or apply it either. @defaultValue the acting schedule's or watch's adder
   */
  onBehalfOf?: string;
}

export interface ReadResultsOptions {
  /** Only results with one of these statuses. Default all. */
  status?: readonly ResultStatus[];
  /** Rows read per Redis round trip. Default 1000. */
  chunkSize?: number;
}

const DEFAULT_TTL_SECONDS = 7 * 24 * 60 * 60;
/** Staged records per script call. */
const STAGE_CHUNK = 1000;
/** Imports whose result layout a store remembers. */
const LAYOUTS_KEPT = 256;
const NON_FINAL_STATES: ImportState[] = ['receiving', 'queued', 'running', 'paused', 'held'];

/** Keeps what a store knows of an import, for the last LAYOUTS_KEPT imports. */
function remember<T>(known: Map<string, T>, importId: string, value: T): void {
  known.delete(importId);
  if (known.size >= LAYOUTS_KEPT) known.delete(known.keys().next().value!);
  known.set(importId, value);
}

/** Import state, staged records, per-record results and counters of every import. */
export class ImportStore {
  readonly prefix: string;
  readonly ttlSeconds: number;
  private readonly redis: Redis;
  private readonly layouts = new Map<string, ResultLayout>();
  /** Records per staged pack, per import (set at its creation, never changed). */
  private readonly packSizes = new Map<string, number>();
  /** Records this process staged so far, per import it stages (one process stages an import). */
  private readonly stagingCursors = new Map<string, number>();

  constructor(options: ImportStoreOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.ttlSeconds = Math.max(1, Math.round(options.ttlSeconds ?? DEFAULT_TTL_SECONDS));
    defineImportScripts(this.redis);
  }

  /** The Redis keys of one import. */
  keys(importId: string): ImportKeys {
    return importKeys(this.prefix, importId);
  }

  /** Creates an import in state `receiving`. */
  async create(init: CreateImportInit): Promise<ImportInfo> {
    const id = init.id ?? newImportId();
    if (!isValidImportId(id)) {
      throw new PorterError('PORTER_USAGE', `import id must match ${IMPORT_ID_PATTERN.source}`);
    }
    const nowMs = Date.now();
    const actor = currentActor();
    const startedBy = init.startedBy ?? actor?.principal?.name;
    const meta = encodeNewMeta({
      ...init,
      id,
      startedBy,
      onBehalfOf:
        init.onBehalfOf ??
        (init.startedBy === undefined ? actor?.principal?.onBehalfOf : undefined),
      actionId: actor?.actionId,
      now: new Date(nowMs).toISOString(),
    });
    const keys = importKeyList(this.keys(id));
    const args = [...this.commonArgs(), nowMs, id, ...meta];
    if ((await runImportScript(this.redis, 'create', keys, args)) !== 1) {
      throw new PorterError('PORTER_CONFLICT', `an import with id ${id} already exists`);
    }
    // the index is in a slot of its own (Cluster); an entry whose import is gone is pruned
    await this.redis.zadd(importIndexKey(this.prefix), nowMs, id);
    actor?.created.push(id);
    await pruneImportIndex(this.redis, this.prefix);
    return this.require(id);
  }

  /**
   * A small write in the import's slot, which a full Redis refuses (OOM): resolves once the
   * node holding the import has room for its writes again. The key expires within seconds.
   */
  async probeRoom(importId: string): Promise<void> {
    await this.redis.set(`${importKeyBase(this.prefix, importId)}:room`, '1', 'PX', 5_000);
  }

  /** The import, or undefined when it does not exist (or expired). */
  async get(importId: string): Promise<ImportInfo | undefined> {
    if (!isValidImportId(importId)) return undefined;
    return readImportInfo(this.redis, this.keys(importId));
  }

  /** Imports newest first; ids whose keys expired are dropped from the index on the way. */
  async list(options: { limit?: number; offset?: number } = {}): Promise<ImportInfo[]> {
    return listImports(this.redis, this.prefix, options);
  }

  /** A page of imports, newest first; `next` is the cursor of the following page, if any. */
  async listPage(
    options: {
      limit?: number;
      cursor?: string;
      /** Only imports from this source (`scim`, a directory source's name, a file name). */
      source?: string;
      /** Only imports of this target. */
      target?: string;
    } = {},
  ): Promise<ImportPage> {
    const { source, target, ...paging } = options;
    if (source === undefined && target === undefined)
      return listImportsPage(this.redis, this.prefix, paging);
    return listImportsFrom(this.redis, this.prefix, paging, { source, target });
  }

  /** How many of the `limit` newest imports are in each state. */
  async countStates(limit?: number): Promise<Map<ImportState, number>> {
    return countImportStates(this.redis, this.prefix, limit);
  }

  /** Records the upload's column order, for reports. */
  async setColumns(importId: string, columns: readonly string[]): Promise<void> {
    const keys = [this.keys(importId).meta];
    const args = ['columns', JSON.stringify(columns)];
    if ((await runImportScript(this.redis, 'updateMeta', keys, args)) !== 1) {
      throw importNotFound(importId);
    }
  }

  /**
   * Records the keys of a JSON or NDJSON upload's records that its first record lacks, for
   * reports (see ImportInfo.moreColumns); the results keep their layout from `columns`.
   */
  async setMoreColumns(importId: string, columns: readonly string[]): Promise<void> {
    const keys = [this.keys(importId).meta];
    const args = ['moreColumns', JSON.stringify(columns)];
    if ((await runImportScript(this.redis, 'updateMeta', keys, args)) !== 1) {
      throw importNotFound(importId);
    }
  }

  /** A sync: records how many of the file's rows failed without a key that can be read. */
  async setUnnamedFailures(importId: string, count: number): Promise<void> {
    const keys = [this.keys(importId).meta];
    const args = ['unnamedFailures', String(count)];
    if ((await runImportScript(this.redis, 'updateMeta', keys, args)) !== 1) {
      throw importNotFound(importId);
    }
  }

  /** Records the anchors that several rows of the upload carry, and their rows: each fails. */
  async setAnchorsTwice(
    importId: string,
    twice: ReadonlyMap<string, readonly number[]>,
  ): Promise<void> {
    const keys = [this.keys(importId).meta];
    const args = ['anchorsTwice', JSON.stringify(Object.fromEntries(twice))];
    if ((await runImportScript(this.redis, 'updateMeta', keys, args)) !== 1) {
      throw importNotFound(importId);
    }
  }

  /**
   * A streamed import's staged records [from, to) whose batch jobs the caller now queues: none
   * before it is prepared, once it ended or once its upload broke off (see CLAIM_STREAM).
   */
  async claimStream(
    importId: string,
    jobs: { small: number; smallUpTo: number; large: number },
  ): Promise<{ from: number; to: number }> {
    const keys = importKeyList(this.keys(importId));
    const reply = (await runImportScript(this.redis, 'claimStream', keys, [
      ...this.commonArgs(),
      jobs.small,
      jobs.smallUpTo,
      jobs.large,
    ])) as [number, number];
    return { from: Number(reply[0]), to: Number(reply[1]) };
  }

  /** When an import's first batch started, unless known (a streamed one's, while receiving). */
  async noteStarted(importId: string): Promise<void> {
    await this.redis.hsetnx(this.keys(importId).meta, 'startedAt', new Date().toISOString());
  }

  /** A streamed import's records whose batches were queued (see claimStream). */
  async queuedUpTo(importId: string): Promise<number> {
    return Number((await this.redis.hget(this.keys(importId).meta, 'queuedUpTo')) ?? 0);
  }

  /** The first staged record no batch job answers for: 0, or after a stream's queued jobs. */
  private async unqueuedFrom(importId: string): Promise<number> {
    const [stream, queued] = await this.redis.hmget(
      this.keys(importId).meta,
      'stream',
      'queuedUpTo',
    );
    return stream === '1' ? Number(queued ?? 0) : 0;
  }

  /**
   * A streamed upload broke off (`reason`): no batch is claimed from now on, and once the
   * batches queued before have ended the import ends failed with the reason. Returns the records
   * whose batches were queued: the staged ones after them are the caller's to report.
   */
  async markBroken(importId: string, reason: string): Promise<number> {
    const keys = [this.keys(importId).meta];
    if ((await runImportScript(this.redis, 'updateMeta', keys, ['brokenUpload', reason])) !== 1) {
      throw importNotFound(importId);
    }
    return this.queuedUpTo(importId);
  }

  /** Records how the import looks records up (decided before its first batch). */
  async setLookup(importId: string, lookup: LookupInfo): Promise<void> {
    const keys = [this.keys(importId).meta];
    if (
      (await runImportScript(this.redis, 'updateMeta', keys, [
        'lookup',
        JSON.stringify(lookup),
      ])) !== 1
    ) {
      throw importNotFound(importId);
    }
  }

  /**
   * Records where the import's story goes on: a held sync's approval and the import that wrote
   * its plan, the import that undid it.
   */
  async setLinks(
    importId: string,
    links: Partial<Pick<ImportInfo, 'approvedAt' | 'writtenBy' | 'undoneBy'>>,
  ): Promise<void> {
    const args = Object.entries(links).flatMap(([field, value]) =>
      value === undefined ? [] : [field, value],
    );
    if (args.length === 0) return;
    if ((await runImportScript(this.redis, 'updateMeta', [this.keys(importId).meta], args)) !== 1) {
      throw importNotFound(importId);
    }
  }

  /**
   * An import that only plans and ends `held` once its last result is in, as a sync past its
   * threshold does: a held plan made of results alone (SCIM's held deletes).
   */
  async holdAtEnd(importId: string): Promise<void> {
    const meta = this.keys(importId).meta;
    if ((await runImportScript(this.redis, 'updateMeta', [meta], ['holdAtEnd', '1'])) !== 1) {
      throw importNotFound(importId);
    }
  }

  /**
   * More planned results in a held plan that grows after it settled (SCIM's held deletes): the
   * results are written and counted, the total grows with them, and nothing is compacted (a
   * compacted bucket takes no more rows).
   */
  async addToHeld(importId: string, results: readonly RecordResult[]): Promise<void> {
    const layout = await this.layoutOf(importId);
    const { written } = await writeResults(
      this.redis,
      importId,
      this.keys(importId),
      results,
      () => this.commonArgs(),
      layout,
    );
    if (written > 0) await this.redis.hincrby(this.keys(importId).meta, 'total', written);
  }

  /** The hash of the upload's natural keys, kept from the upload until the import is prepared. */
  uploadKeysKey(importId: string): string {
    return uploadKeysKey(this.prefix, importId);
  }

  /** The hash of the upload's look-alike key forms, kept as long as its keys. */
  uploadLookalikesKey(importId: string): string {
    return uploadLookalikesKey(this.prefix, importId);
  }

  /** Appends valid records in upload order, only while `receiving`. Returns the staged count. */
  async stage(importId: string, items: readonly StagedRecord[]): Promise<number> {
    if (items.length === 0) return this.stagedCount(importId);
    const layout = await this.layoutOf(importId);
    return this.appendStaged(
      importId,
      'stage',
      items.map((item) => encodeStaged(item, layout)),
    );
  }

  /**
   * Appends stored records to the staged list a pack at a time, after the records this process
   * counted (read once per import; a count that is no longer the import's is read again).
   */
  private async appendStaged(
    importId: string,
    script: 'stage' | 'addServerRows',
    records: readonly string[],
    retried = false,
  ): Promise<number> {
    const keys = importKeyList(this.keys(importId));
    const [size, counted] = await Promise.all([
      this.packSizeOf(importId),
      this.stagingCursors.get(importId) ?? this.stagedSoFar(importId),
    ]);
    const pipeline = this.redis.pipeline();
    let at = counted;
    for (const part of chunks(records, STAGE_CHUNK)) {
      const { fill, packs } = packRecords(at, size, part);
      queueImportScript(pipeline, script, keys, [
        ...this.commonArgs(),
        at,
        part.length,
        fill,
        ...packs,
      ]);
      at += part.length;
    }
    this.stagingCursors.delete(importId);
    const replies = (await pipeline.exec()) ?? [];
    for (const [index, [error, reply]] of replies.entries()) {
      if (error) throw error;
      if (reply === -1) throw importNotFound(importId);
      if (reply === -2) {
        const state = await this.getState(importId);
        throw importStateConflict(importId, state, 'records can only be staged while receiving');
      }
      if (reply === -3) {
        // another process staged meanwhile: counted again once; nothing of this call was written
        if (index === 0 && !retried) return this.appendStaged(importId, script, records, true);
        throw new PorterError('PORTER_INTERNAL', 'staged records were counted wrongly', {
          details: { importId },
        });
      }
    }
    remember(this.stagingCursors, importId, at);
    return at;
  }

  /** Records per element of the import's staged list (1 for an import staged before packs). */
  private async packSizeOf(importId: string): Promise<number> {
    const cached = this.packSizes.get(importId);
    if (cached !== undefined) return cached;
    // the id says whether the import exists: a size is kept only for one that does
    const [id, stored] = await this.redis.hmget(this.keys(importId).meta, 'id', 'stagedPack');
    const size = stored === null ? 1 : Number(stored);
    if (id !== null) remember(this.packSizes, importId, size);
    return size;
  }

  /** The records staged so far, as the staging scripts count them. */
  private async stagedSoFar(importId: string): Promise<number> {
    return (await this.stagedRead(importId)).counted;
  }

  /**
   * The staged count as kept (the meta field `staged`, or the list's length for an import staged
   * before packs), and the list's length (0 once the records are dropped).
   */
  private async stagedRead(importId: string): Promise<{ counted: number; length: number }> {
    const keys = this.keys(importId);
    const [stored, length] = await Promise.all([
      this.redis.hget(keys.meta, 'staged'),
      this.redis.llen(keys.staged),
    ]);
    return { counted: stored === null ? length : Number(stored), length };
  }

  /**
   * Gives a new import (still receiving) the staged records of another, copied inside Redis; a
   * dry run's records for the import that applies it. Returns how many.
   */
  async copyStaged(fromId: string, toId: string): Promise<number> {
    const from = this.keys(fromId);
    const to = this.keys(toId);
    const [staged, size] = await Promise.all([this.stagedSoFar(fromId), this.packSizeOf(fromId)]);
    await this.redis.call('COPY', from.staged, to.staged, 'REPLACE');
    await Promise.all([
      this.redis.expire(to.staged, this.ttlSeconds),
      this.redis.hset(to.meta, 'staged', staged, 'stagedPack', size),
    ]);
    this.packSizes.delete(toId);
    this.stagingCursors.delete(toId);
    return this.stagedCount(toId);
  }

  /**
   * A sync's preparation begins adding the server's records its file leaves out; returns the
   * upload's total (their rows follow it). Run again, it drops what an earlier run added.
   */
  async beginServerRows(importId: string): Promise<number> {
    const keys = importKeyList(this.keys(importId));
    this.stagingCursors.delete(importId);
    const reply = await runImportScript(this.redis, 'beginServerRows', keys, this.commonArgs());
    if (reply === -1) throw importNotFound(importId);
    return Number(reply);
  }

  /** Stages server records of a sync after its upload's, each counted in the total. */
  async addServerRows(importId: string, items: readonly StagedRecord[]): Promise<void> {
    if (items.length === 0) return;
    const layout = await this.layoutOf(importId);
    const records = items.map((item) => encodeStaged(item, layout));
    await this.appendStaged(importId, 'addServerRows', records);
  }

  /**
   * A sync's total is whole: records its plan and batches; `sync.held` makes it plan only and
   * end `held`. It may settle from here on.
   */
  async endServerRows(importId: string, batches: number, sync: SyncPlanInfo): Promise<void> {
    const keys = importKeyList(this.keys(importId));
    const args = [...this.commonArgs(), batches, JSON.stringify(sync), sync.held ? '1' : '0'];
    if ((await runImportScript(this.redis, 'endServerRows', keys, args)) === -1) {
      throw importNotFound(importId);
    }
  }

  /** Staged records from position `start` (0-based), at most `count`; none once settled. */
  async readStaged(importId: string, start: number, count: number): Promise<StagedRecord[]> {
    if (count <= 0) return [];
    const [size, layout] = await Promise.all([this.packSizeOf(importId), this.layoutOf(importId)]);
    const [first, last] = packRange(start, count, size);
    const packs = await this.redis.lrangeBuffer(this.keys(importId).staged, first, last);
    return unpackRecords(packs, start, count, size).map((json) => decodeStaged(json, layout));
  }

  /** Removes the staged records of an import that will never send them (UNLINK: allowed when Redis is full). */
  async dropStaged(importId: string): Promise<void> {
    await this.redis.unlink(this.keys(importId).staged);
  }

  /** The records staged and not yet dropped (none once the import settled). */
  async stagedCount(importId: string): Promise<number> {
    const { counted, length } = await this.stagedRead(importId);
    return length === 0 ? 0 : counted;
  }

  /**
   * The upload is whole: receiving → queued with its total (invalid records included).
   * Finalizes at once when every record already has a result. An import cancelled meanwhile
   * stays cancelled but learns its total, so it settles once its batches report every row
   * `unprocessed`. Calling it again with the same total changes nothing.
   */
  async markReceived(
    importId: string,
    received: { total: number; batches: number },
  ): Promise<ImportInfo> {
    if (!Number.isSafeInteger(received.total) || received.total < 0) {
      throw new PorterError('PORTER_INTERNAL', 'an import total must be a whole number ≥ 0', {
        details: { importId, value: received.total },
      });
    }
    const keys = importKeyList(this.keys(importId));
    const args = [...this.commonArgs(), received.total, received.batches];
    const reply = await runImportScript(this.redis, 'markReceived', keys, args);
    if (reply === -1) throw importNotFound(importId);
    if (reply === -2) {
      const state = await this.getState(importId);
      throw importStateConflict(importId, state, 'it was already received with another total');
    }
    const [meta, counts] = reply as [unknown, unknown];
    const info = this.infoFrom(importId, meta, counts);
    // settled here (a streamed import whose rows all had results): its snapshot goes now
    if (info.settled) await this.redis.unlink(...this.snapshotKeys(importId));
    return info;
  }

  /**
   * Ends an active import `failed`, with the reason and its error code, when none of its rows
   * was ever handed to the admin server and none succeeded: nothing could be sent (a target
   * that cannot be reached, or refuses porter's credentials). False when something was sent,
   * or the import ended already.
   */
  async failUnsent(importId: string, reason: string, code: ErrorCode): Promise<boolean> {
    const journal = sentRowsKeys(this.prefix, importId);
    const keys = [...importKeyList(this.keys(importId)), journal.bitmap, journal.set];
    const reply = await runImportScript(this.redis, 'failUnsent', keys, [
      ...this.commonArgs(),
      reason,
      code,
    ]);
    if (reply === -1) throw importNotFound(importId);
    return reply === 1;
  }

  /**
   * Atomic compare-and-set of the state: moves to `to` only from one of `from`, never out of a
   * final state. Sets updatedAt, finishedAt on final states, and the reason (cleared if none).
   */
  async transition(
    importId: string,
    from: readonly ImportState[],
    to: ImportState,
    reason?: string,
  ): Promise<boolean> {
    return this.transitionUnlessResumed(importId, from, to, reason, 0);
  }

  /**
   * A transition that is refused when the import was resumed (paused → running or queued) at
   * or after `since` (epoch ms; 0: never refused): a decision read before a resume must not
   * undo it.
   */
  async transitionUnlessResumed(
    importId: string,
    from: readonly ImportState[],
    to: ImportState,
    reason: string | undefined,
    since: number,
  ): Promise<boolean> {
    const keys = importKeyList(this.keys(importId));
    const args = [...this.commonArgs(), to, reason ?? '', String(since), String(Date.now())];
    args.push(...from);
    const reply = await runImportScript(this.redis, 'transition', keys, args);
    if (reply === -1) throw importNotFound(importId);
    if (reply === 1 && FINAL_IMPORT_STATES.has(to)) await this.dropSnapshotIfSettled(importId);
    return reply === 1;
  }

  /** A settled import's snapshot goes (whichever write settled it): nothing reads it any more. */
  private async dropSnapshotIfSettled(importId: string): Promise<void> {
    if ((await this.redis.hget(this.keys(importId).meta, 'settled')) === '1') {
      await this.redis.unlink(...this.snapshotKeys(importId));
    }
  }

  /**
   * Writes each row's result once and counts only new ones (`written`); the import becomes
   * completed or completed_with_errors when its last result arrives.
   */
  async recordResults(
    importId: string,
    results: readonly RecordResult[],
    /** The import as the caller knows it, which saves reading its layout. */
    known?: Pick<ImportInfo, 'columns' | 'options'>,
  ): Promise<{ written: number; info: ImportInfo }> {
    const keys = this.keys(importId);
    const layout = known
      ? layoutFor(known.columns, known.options.resource)
      : await this.layoutOf(importId);
    const { written, hashes, full } = await writeResults(
      this.redis,
      importId,
      keys,
      results,
      () => this.commonArgs(),
      layout,
    );
    const info = hashes ? this.infoFrom(importId, ...hashes) : await this.require(importId);
    // every row of a full bucket has its result (and its undo entry before it): both shrink;
    // once the import settles, the rest of them too
    if (written > 0 && info.settled) {
      await Promise.all([
        this.compact(importId),
        this.redis.unlink(...this.snapshotKeys(importId)),
      ]);
    } else if (full.length > 0) await this.compactRows(importId, full);
    return { written, info };
  }

  /**
   * Deflates a settled import's results and undo entries, a bucket of rows at a time
   * (row-buckets.ts); nothing writes to them any more, and reading them works either way.
   */
  async compact(importId: string): Promise<void> {
    const keys = this.keys(importId);
    await Promise.all([
      compactBuckets(this.redis, keys.results),
      compactBuckets(this.redis, keys.undo),
    ]);
  }

  /** Deflates these buckets of an import's results and undo entries, all of whose rows are done. */
  private async compactRows(importId: string, buckets: readonly number[]): Promise<void> {
    const keys = this.keys(importId);
    await Promise.all([
      compactFields(this.redis, keys.results, buckets),
      compactFields(this.redis, keys.undo, buckets),
    ]);
  }

  /** The results these rows have (rows without one are left out). */
  async resultsOf(importId: string, rows: readonly number[]): Promise<Map<number, RecordResult>> {
    const found = new Map<number, RecordResult>();
    if (rows.length === 0) return found;
    const keys = this.keys(importId);
    const [entries, layout] = await Promise.all([
      readBuckets(this.redis, keys.results, [...new Set(rows.map(bucketOf))]),
      this.layoutOf(importId),
    ]);
    for (const row of rows) {
      const json = entries.get(row);
      if (json) found.set(row, decodeResult(row, json, layout));
    }
    return found;
  }

  /**
   * How the import's results are stored (its columns and key field), read once per import while
   * the process remembers it: the columns are set before the first result and never change.
   */
  private async layoutOf(importId: string): Promise<ResultLayout> {
    const cached = this.layouts.get(importId);
    if (cached) return cached;
    const [columns, options] = await this.redis.hmget(
      this.keys(importId).meta,
      'columns',
      'options',
    );
    const layout = resultLayout({ columns: columns ?? undefined, options: options ?? undefined });
    if (layout.columns.length > 0) {
      remember(this.layouts, importId, layout);
    }
    return layout;
  }

  /** The rows among these that have no result yet, in the order given. */
  async missingRows(importId: string, rows: readonly number[]): Promise<number[]> {
    return findMissingRows(this.redis, this.keys(importId), rows);
  }

  /**
   * Cancels an import that is not final: state `cancelled` at once. Its rows without a result
   * still get one (`unprocessed`, PORTER_CANCELLED) from the workers or recordUnprocessed.
   */
  async cancel(importId: string, reason = 'cancelled on request'): Promise<ImportInfo> {
    await this.transition(importId, NON_FINAL_STATES, 'cancelled', reason);
    return this.require(importId);
  }

  /**
   * queued/running → paused (a streamed import's also from receiving), on a decision read at
   * `decidedAt` (epoch ms). False when the import is in another state, or was resumed since that
   * decision was read.
   */
  async pause(importId: string, reason: string, decidedAt = 0): Promise<boolean> {
    return this.transitionUnlessResumed(
      importId,
      ['receiving', 'queued', 'running'],
      'paused',
      reason,
      decidedAt,
    );
  }

  /** paused → running (queued when no batch had started). False when it was not paused. */
  async resume(importId: string): Promise<boolean> {
    const startedAt = await this.redis.hget(this.keys(importId).meta, 'startedAt');
    return this.transition(importId, ['paused'], startedAt ? 'running' : 'queued');
  }

  /** The state and its reason, cheap enough to ask before every call. */
  async stateOf(importId: string): Promise<ImportStateRead | undefined> {
    const [state, reason, reasonCode] = await this.redis.hmget(
      this.keys(importId).meta,
      'state',
      'reason',
      'reasonCode',
    );
    if (state === null || state === undefined) return undefined;
    return {
      state: state as ImportState,
      ...(reason ? { reason } : {}),
      ...(reasonCode ? { reasonCode } : {}),
    };
  }

  /** The state alone, cheap enough to ask before every batch. */
  async getState(importId: string): Promise<ImportState | undefined> {
    const state = await this.redis.hget(this.keys(importId).meta, 'state');
    return (state ?? undefined) as ImportState | undefined;
  }

  async isCancelled(importId: string): Promise<boolean> {
    return (await this.getState(importId)) === 'cancelled';
  }

  async isFinal(importId: string): Promise<boolean> {
    const state = await this.getState(importId);
    return state !== undefined && FINAL_IMPORT_STATES.has(state);
  }

  /**
   * Results in input order, read chunk by chunk. Rows without a result are skipped while the
   * import is unsettled; once settled, a missing row (lost bookkeeping) comes out `unprocessed`
   * with PORTER_INTERNAL, so a report still has one line per record.
   */
  results(importId: string, options: ReadResultsOptions = {}): AsyncGenerator<RecordResult> {
    return readResults(this.redis, importId, this.keys(importId), options);
  }

  /** Done, total, counts, settled, and the rate since the first batch started. */
  async progress(importId: string): Promise<ImportProgress> {
    const progress = await readImportProgress(this.redis, this.keys(importId));
    if (!progress) throw importNotFound(importId);
    return progress;
  }

  /**
   * Gives every staged record without a result an `unprocessed` result, e.g. after a cancel
   * whose batch jobs were removed from the queue; `from` skips the staged records before it. By
   * default a streamed import's queued batches are skipped: they answer for their rows
   * themselves (a call of theirs may be under way), and an import that ended claims no more;
   * `to` stops before that staged record.
   * Safe beside running workers. Returns how many.
   */
  async recordUnprocessed(
    importId: string,
    why: { errorCode: string; error: string },
    from?: number,
    to = Number.MAX_SAFE_INTEGER,
  ): Promise<number> {
    let written = 0;
    for (let start = from ?? (await this.unqueuedFrom(importId)); ; start += RESULT_CHUNK) {
      const staged = await this.readStaged(importId, start, Math.min(RESULT_CHUNK, to - start));
      const missing = new Set(
        await this.missingRows(
          importId,
          staged.map((item) => item.row),
        ),
      );
      const results: RecordResult[] = staged
        .filter((item) => missing.has(item.row))
        .map((item) => ({
          row: item.row,
          ...(item.line === undefined ? {} : { line: item.line }),
          status: 'unprocessed',
          errorCode: why.errorCode,
          error: why.error,
          input: item.input,
          ...(item.serverOnly ? { serverOnly: true } : {}),
        }));
      if (results.length > 0) written += (await this.recordResults(importId, results)).written;
      if (staged.length < RESULT_CHUNK || start + RESULT_CHUNK >= to) return written;
    }
  }

  /**
   * The import's snapshot of the server and a sync's list of what its file leaves out: nothing
   * reads them once it has settled, so they go then, not when its results expire.
   */
  private snapshotKeys(importId: string): string[] {
    return [
      ...snapshotKeyList(snapshotKeys(this.prefix, importId)),
      missingListKey(this.prefix, importId),
    ];
  }

  /** Removes every key of the import. True when it existed. */
  async delete(importId: string): Promise<boolean> {
    const [removed] = await Promise.all([
      this.redis.unlink(...importKeyList(this.keys(importId)), ...this.snapshotKeys(importId)),
      this.redis.zrem(importIndexKey(this.prefix), importId),
    ]);
    return removed > 0;
  }

  private commonArgs(): ScriptArg[] {
    return [this.ttlSeconds, new Date().toISOString(), importEventsChannel(this.prefix)];
  }

  private async require(importId: string): Promise<ImportInfo> {
    const info = await this.get(importId);
    if (!info) throw importNotFound(importId);
    return info;
  }

  private infoFrom(importId: string, meta: unknown, counts: unknown): ImportInfo {
    const info = decodeImportInfo(hashFromReply(meta), hashFromReply(counts));
    if (!info) throw importNotFound(importId);
    return info;
  }
}
