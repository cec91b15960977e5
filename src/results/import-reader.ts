/** Reading imports back: info, the index, results in input order chunk by chunk, progress. */
import type { Redis } from 'ioredis';
import type { ImportInfo, ImportState, RecordResult, ResultStatus } from '../model/import.js';
import {
  decodeImportInfo,
  decodeMetaExtras,
  decodeResult,
  hashFromReply,
  resultLayout,
  storedStatus,
} from './import-codec.js';
import { BUCKET_ROWS, bucketOf, readBuckets } from './row-buckets.js';
import { importNotFound } from './import-errors.js';
import { PorterError } from '../errors/porter-error.js';
import { importIndexKey, importKeys, type ImportKeys } from './import-keys.js';
import { readTwoHashes } from '../util/redis-commands.js';

export interface ImportProgress {
  id: string;
  state: ImportState;
  /** False while the upload is still being received (total is 0 then). */
  totalKnown: boolean;
  total: number;
  done: number;
  counts: Record<ResultStatus, number>;
  /** Final, and every record has its result: the report is complete. */
  settled: boolean;
  startedAt?: string;
  finishedAt?: string;
  /** Results per second since the first batch started (since creation before that). */
  ratePerSecond: number;
  /** Seconds left at that rate, when the total is known and the rate is not zero. */
  etaSeconds?: number;
}

async function readMeta(
  redis: Redis,
  keys: ImportKeys,
): Promise<{ meta: Record<string, string>; counts: Record<string, string> }> {
  const [meta, counts] = await readTwoHashes(redis, keys.meta, keys.counts);
  return { meta: hashFromReply(meta), counts: hashFromReply(counts) };
}

/** The import's info, read in one MULTI so state and counts belong together. */
export async function readImportInfo(
  redis: Redis,
  keys: ImportKeys,
): Promise<ImportInfo | undefined> {
  const { meta, counts } = await readMeta(redis, keys);
  return decodeImportInfo(meta, counts);
}

/** Imports newest first; ids whose keys expired are removed from the index on the way. */
export async function listImports(
  redis: Redis,
  prefix: string,
  options: { limit?: number; offset?: number },
): Promise<ImportInfo[]> {
  const limit = Math.max(1, options.limit ?? 50);
  const offset = Math.max(0, options.offset ?? 0);
  const ids = await redis.zrevrange(importIndexKey(prefix), offset, offset + limit - 1);
  return readInfos(redis, prefix, ids);
}

/** One page of the imports, newest first, and the cursor of the next page when there is one. */
export interface ImportPage {
  imports: ImportInfo[];
  next?: string;
}

/** The cursor after an import of the index: its score and id, opaque to callers. */
function encodeCursor(score: string, id: string): string {
  return Buffer.from(`${score}:${id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { score: string; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,16}):([A-Za-z0-9_-]{1,64})$/.exec(text);
  if (!match) {
    throw new PorterError('PORTER_USAGE', 'cursor: use the value a previous page gave as next');
  }
  return { score: match[1]!, id: match[2]! };
}

/**
 * Imports newest first, `limit` at a time: a page starts after the import its cursor names (or
 * at the newest), so imports created meanwhile never shift the pages that follow.
 */
export async function listImportsPage(
  redis: Redis,
  prefix: string,
  options: { limit?: number; cursor?: string },
): Promise<ImportPage> {
  const limit = Math.max(1, Math.min(1000, options.limit ?? 50));
  const index = importIndexKey(prefix);
  let flat: string[];
  if (options.cursor === undefined || options.cursor === '') {
    flat = await redis.zrevrange(index, 0, limit, 'WITHSCORES');
  } else {
    const after = decodeCursor(options.cursor);
    const rank = await redis.zrevrank(index, after.id);
    flat =
      rank === null
        ? // the import left the index (expired): continue below its creation time
          await redis.zrevrangebyscore(
            index,
            `(${after.score}`,
            '-inf',
            'WITHSCORES',
            'LIMIT',
            0,
            limit + 1,
          )
        : await redis.zrevrange(index, rank + 1, rank + 1 + limit, 'WITHSCORES');
  }
  const entries: { id: string; score: string }[] = [];
  for (let position = 0; position + 1 < flat.length; position += 2) {
    entries.push({ id: flat[position]!, score: flat[position + 1]! });
  }
  const page = entries.slice(0, limit);
  const last = page[page.length - 1];
  const imports = await readInfos(
    redis,
    prefix,
    page.map((entry) => entry.id),
  );
  return entries.length > limit && last
    ? { imports, next: encodeCursor(last.score, last.id) }
    : { imports };
}

/** How many of the `limit` newest imports are in each state (bounded work, for metrics). */
export async function countImportStates(
  redis: Redis,
  prefix: string,
  limit = 1000,
): Promise<Map<ImportState, number>> {
  const ids = await redis.zrevrange(importIndexKey(prefix), 0, limit - 1);
  const counts = new Map<ImportState, number>();
  if (ids.length === 0) return counts;
  // one command each (auto-pipelined): on a Cluster each import's keys sit in their own slot
  const states = await Promise.all(
    ids.map((id) => redis.hget(importKeys(prefix, id).meta, 'state')),
  );
  for (const state of states) {
    if (typeof state === 'string') {
      const known = state as ImportState;
      counts.set(known, (counts.get(known) ?? 0) + 1);
    }
  }
  return counts;
}

/** The infos of these imports, in order; ids whose keys expired leave the index. */
async function readInfos(redis: Redis, prefix: string, ids: string[]): Promise<ImportInfo[]> {
  if (ids.length === 0) return [];
  const index = importIndexKey(prefix);
  // one command each (auto-pipelined): on a Cluster each import's keys sit in their own slot
  const replies = await Promise.all(
    ids.map((id) => {
      const keys = importKeys(prefix, id);
      return Promise.all([redis.hgetall(keys.meta), redis.hgetall(keys.counts)]);
    }),
  );
  const infos: ImportInfo[] = [];
  const expired: string[] = [];
  ids.forEach((id, position) => {
    const [meta, counts] = replies[position]!;
    const info = decodeImportInfo(hashFromReply(meta), hashFromReply(counts));
    if (info) infos.push(info);
    else expired.push(id);
  });
  if (expired.length > 0) await redis.zrem(index, ...expired);
  return infos;
}

/**
 * Drops the index entries of expired imports among the `count` oldest, so the index does not
 * grow forever when nobody pages through old imports. Bounded work; run on create.
 */
export async function pruneImportIndex(redis: Redis, prefix: string, count = 10): Promise<void> {
  const index = importIndexKey(prefix);
  const oldest = await redis.zrange(index, 0, String(count - 1));
  if (oldest.length === 0) return;
  const replies = await Promise.all(oldest.map((id) => redis.exists(importKeys(prefix, id).meta)));
  const expired = oldest.filter((_, position) => replies[position] === 0);
  if (expired.length > 0) await redis.zrem(index, ...expired);
}

/** Progress of an import, or undefined when it does not exist. */
export async function readImportProgress(
  redis: Redis,
  keys: ImportKeys,
  nowMs: number = Date.now(),
): Promise<ImportProgress | undefined> {
  const { meta, counts } = await readMeta(redis, keys);
  const info = decodeImportInfo(meta, counts);
  if (!info) return undefined;
  const extras = decodeMetaExtras(meta);
  const startMs = Date.parse(extras.startedAt ?? info.createdAt);
  const endMs = info.finishedAt ? Date.parse(info.finishedAt) : nowMs;
  const elapsedSeconds = Math.max((endMs - startMs) / 1000, 0.001);
  const ratePerSecond = info.done / elapsedSeconds;
  const progress: ImportProgress = {
    id: info.id,
    state: info.state,
    totalKnown: extras.storedTotal >= 0,
    total: info.total,
    done: info.done,
    counts: info.counts,
    settled: extras.settled,
    ratePerSecond,
  };
  if (extras.startedAt) progress.startedAt = extras.startedAt;
  if (info.finishedAt) progress.finishedAt = info.finishedAt;
  if (progress.totalKnown && !extras.settled && ratePerSecond > 0) {
    progress.etaSeconds = Math.max(info.total - info.done, 0) / ratePerSecond;
  }
  return progress;
}

/** Buckets read per round trip: 16 × 64 = 1,024 rows. */
const READ_BUCKETS = 16;

/**
 * Results in input order: the buckets of rows 1..total (or up to the highest row seen, before
 * the total is known) a few at a time, the next ones fetched while the current are consumed.
 */
export async function* readResults(
  redis: Redis,
  importId: string,
  keys: ImportKeys,
  options: { status?: readonly ResultStatus[] } = {},
): AsyncGenerator<RecordResult> {
  const wanted = options.status ? new Set<ResultStatus>(options.status) : undefined;
  const { meta } = await readMeta(redis, keys);
  if (meta.id === undefined) throw importNotFound(importId);
  const { settled, storedTotal, maxRow } = decodeMetaExtras(meta);
  const layout = resultLayout(meta);
  const last = Math.max(storedTotal, maxRow);
  const lastBucket = last >= 1 ? bucketOf(last) : -1;
  const fetch = (first: number): Promise<Map<number, string>> => {
    const buckets: number[] = [];
    for (let bucket = first; bucket <= lastBucket && bucket < first + READ_BUCKETS; bucket++) {
      buckets.push(bucket);
    }
    return readBuckets(redis, keys.results, buckets);
  };

  let pending = lastBucket >= 0 ? fetch(0) : undefined;
  for (let first = 0; pending; first += READ_BUCKETS) {
    const found = await pending;
    const next = first + READ_BUCKETS;
    pending = next <= lastBucket ? fetch(next) : undefined;
    // A consumer that stops early leaves the prefetch unawaited; keep it from going unhandled.
    pending?.catch(() => {});
    const end = Math.min(last, next * BUCKET_ROWS);
    for (let row = first * BUCKET_ROWS + 1; row <= end; row++) {
      const json = found.get(row);
      if (json === undefined) {
        if (settled && (!wanted || wanted.has('unprocessed'))) yield lostResult(row);
        continue;
      }
      if (wanted && !wanted.has(storedStatus(json))) continue;
      yield decodeResult(row, json, layout);
    }
  }
}

function lostResult(row: number): RecordResult {
  return {
    row,
    status: 'unprocessed',
    errorCode: 'PORTER_INTERNAL',
    error: 'no result was recorded for this row; import it again',
    input: {},
  };
}

/** Pages of the index read at most for one page of imports from one source. */
const SOURCE_SCAN_PAGES = 20;

/** Which imports a filtered list keeps: from one source, of one target. */
export interface ImportFilter {
  /** `scim`, a directory source's name, or an upload's file name. */
  source?: string;
  /** A target's name (`default` for imports that name none). */
  target?: string;
}

function kept(info: ImportInfo, filter: ImportFilter): boolean {
  // the source of an upload is its file name; a directory source's import names it too
  if (
    filter.source !== undefined &&
    info.source !== filter.source &&
    info.options.source?.name !== filter.source
  )
    return false;
  return filter.target === undefined || (info.options.target ?? 'default') === filter.target;
}

/**
 * A page of the imports that `filter` keeps, newest first: the index is read a page at a time
 * until `limit` are found, the index ends, or SOURCE_SCAN_PAGES pages were read (then `next`
 * goes on from where the reading stopped, and the page may hold fewer).
 */
export async function listImportsFrom(
  redis: Redis,
  prefix: string,
  options: { limit?: number; cursor?: string },
  filter: ImportFilter,
): Promise<ImportPage> {
  const limit = Math.max(1, Math.min(1000, options.limit ?? 50));
  const found: ImportInfo[] = [];
  let cursor = options.cursor;
  for (let read = 0; read < SOURCE_SCAN_PAGES; read++) {
    const page = await listImportsPage(redis, prefix, { limit, cursor });
    for (const info of page.imports) {
      if (!kept(info, filter)) continue;
      found.push(info);
      if (found.length === limit) {
        // the cursor of the last import given: the next page starts after it
        return { imports: found, next: encodeCursor(String(Date.parse(info.createdAt)), info.id) };
      }
    }
    if (!page.next) return { imports: found };
    cursor = page.next;
  }
  return { imports: found, next: cursor };
}
