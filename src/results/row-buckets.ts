/**
 * Per-row values kept a bucket of rows at a time: one hash field per 64 rows (`b<bucket>`)
 * instead of one per row, so Redis keeps one entry's overhead for 64 records. A bucket's text is
 * a string of entries `RS row US value` (RS = U+001E, US = U+001F; a value is JSON, which writes
 * both escaped, so neither can occur inside one). When a row appears twice the last entry counts.
 *
 * A write appends its entries for a bucket as one piece: deflated, as a frame (a zero byte, the
 * deflated length as 4 bytes big-endian, the raw deflate), when that is smaller, else as text.
 * JSON text never holds a zero byte, so frames and text mix in one field, in the order written.
 * A batch's entries are then written once, already small, and never read back to be shrunk.
 *
 * A bucket that holds much text (entries written one or two at a time) is compacted once no
 * more entries will come: its entries deflated together into the field `z<bucket>` and its
 * plain field removed (compactFields, compactBuckets).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Redis } from 'ioredis';
import { defineScript, type ScriptCommand } from '../util/redis-commands.js';

/** Rows per bucket. Written into Redis: changing it needs a migration of stored imports. */
export const BUCKET_ROWS = 64;
const RS = '\u001e';
const US = '\u001f';

/** The bucket a row's entry is kept in: 0 for rows 1–64, and so on. */
export function bucketOf(row: number): number {
  return Math.floor((row - 1) / BUCKET_ROWS);
}

/** The hash field of a bucket's plain entries. */
export function plainField(bucket: number): string {
  return `b${bucket}`;
}

/** The hash field of a compacted bucket. */
export function compactField(bucket: number): string {
  return `z${bucket}`;
}

/** One entry, to append to its bucket. */
export function bucketEntry(row: number, value: string): string {
  return `${RS}${row}${US}${value}`;
}

/** Adds a bucket's entries to `into` (row → value); a row given twice keeps its last entry. */
export function parseBucket(text: string, into: Map<number, string>): void {
  let start = text.indexOf(RS);
  while (start !== -1) {
    const next = text.indexOf(RS, start + 1);
    const end = next === -1 ? text.length : next;
    const split = text.indexOf(US, start + 1);
    if (split !== -1 && split < end) {
      into.set(Number(text.slice(start + 1, split)), text.slice(split + 1, end));
    }
    start = next;
  }
}

/** The first byte of a frame: JSON text never holds it. */
const FRAME = 0;
/** A frame's zero byte and the deflated length. */
const FRAME_HEAD = 5;
/** Pieces shorter than this (an entry or two) stay text: too small to gain by deflating. */
const FRAME_FROM = 256;
/** A plain bucket is compacted when it holds at least this many bytes of text. */
const COMPACT_FROM = 1024;

/**
 * The fastest level: 64 like results deflate to within 1 % of the default level's size
 * (7,415 bytes → 1,144 against 1,131), in about half the time.
 */
const DEFLATE = { level: 1 };

/** A write's entries for one bucket as it appends them: a frame when that is smaller, else text. */
export function bucketPiece(text: string): string | Buffer {
  if (text.length < FRAME_FROM) return text;
  const packed = deflateRawSync(text, DEFLATE);
  // text.length counts UTF-16 units, never more than its UTF-8 bytes
  if (packed.length + FRAME_HEAD >= text.length) return text;
  const frame = Buffer.allocUnsafe(packed.length + FRAME_HEAD);
  frame[0] = FRAME;
  frame.writeUInt32BE(packed.length, 1);
  packed.copy(frame, FRAME_HEAD);
  return frame;
}

/**
 * Walks a plain bucket as stored, frames and text in order: `text` gets each part's entries as
 * text (frames inflated). Returns how many bytes of it are text.
 */
function walkBucket(data: Buffer, text?: (part: string) => void): number {
  let plain = 0;
  let at = 0;
  while (at < data.length) {
    if (data[at] === FRAME) {
      const end = at + FRAME_HEAD + data.readUInt32BE(at + 1);
      if (end > data.length) throw new RangeError('a bucket ends inside a frame');
      text?.(inflateRawSync(data.subarray(at + FRAME_HEAD, end)).toString('utf8'));
      at = end;
    } else {
      const next = data.indexOf(FRAME, at);
      const end = next === -1 ? data.length : next;
      text?.(data.toString('utf8', at, end));
      plain += end - at;
      at = end;
    }
  }
  return plain;
}

/** Adds a plain bucket's entries, frames and text alike, to `into`; the last entry of a row wins. */
export function parseStoredBucket(data: Buffer, into: Map<number, string>): void {
  walkBucket(data, (part) => parseBucket(part, into));
}

/** Entries grouped by bucket, each bucket's text in the order given: (bucket, text) pairs. */
export function groupEntries(entries: Iterable<[number, string]>): Map<number, string> {
  const grouped = new Map<number, string>();
  for (const [row, value] of entries) {
    const bucket = bucketOf(row);
    grouped.set(bucket, (grouped.get(bucket) ?? '') + bucketEntry(row, value));
  }
  return grouped;
}

/**
 * The entries of these buckets (row → value), plain and compacted alike: one HMGET of the plain
 * fields and one of the compacted ones, sent together.
 */
export async function readBuckets(
  redis: Redis,
  key: string,
  buckets: readonly number[],
): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  if (buckets.length === 0) return found;
  const [plain, packed] = await Promise.all([
    redis.hmgetBuffer(key, ...buckets.map(plainField)),
    redis.hmgetBuffer(key, ...buckets.map(compactField)),
  ]);
  for (let index = 0; index < buckets.length; index++) {
    const compact = packed[index];
    if (compact) parseBucket(inflateRawSync(compact).toString('utf8'), found);
    const stored = plain[index];
    if (stored) parseStoredBucket(stored, found);
  }
  return found;
}

/**
 * Lua for the results script: whether every row of a bucket has its result (its 64 bits in the
 * import's `done` bitmap, bit row − 1, are 8 whole bytes).
 */
export const BUCKET_LUA = `
local BUCKET_ROWS = ${BUCKET_ROWS}
local function bucket_full(done, bucket)
  return redis.call('BITCOUNT', done, bucket * 8, bucket * 8 + 7) == BUCKET_ROWS
end
`;

/** Lua: appends `text` to a bucket's plain field (a compacted bucket takes no more entries). */
const APPEND = `
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], 'z' .. ARGV[i]) == 0 then
    local field = 'b' .. ARGV[i]
    redis.call('HSET', KEYS[1], field, (redis.call('HGET', KEYS[1], field) or '') .. ARGV[i + 1])
  end
end
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return 1
`;

/**
 * Lua: replaces a plain bucket by its compacted form, if it still holds what was compacted:
 * entries are only ever appended, so an unchanged length is unchanged text. A bucket compacted
 * before keeps its compacted form, and what was appended since stays plain: one compacted form
 * is never written over another.
 */
const COMPACT = `
local done = 0
for i = 1, #ARGV, 3 do
  local plain = 'b' .. ARGV[i]
  if redis.call('HEXISTS', KEYS[1], 'z' .. ARGV[i]) == 0
    and redis.call('HSTRLEN', KEYS[1], plain) == tonumber(ARGV[i + 1]) then
    redis.call('HSET', KEYS[1], 'z' .. ARGV[i], ARGV[i + 2])
    redis.call('HDEL', KEYS[1], plain)
    done = done + 1
  end
end
return done
`;

const SCRIPTS = { append: APPEND, compact: COMPACT } as const;
const defined = new WeakMap<Redis, Map<keyof typeof SCRIPTS, ScriptCommand>>();

/** A script of this file as a function, made once per connection. */
function scriptOn(redis: Redis, name: keyof typeof SCRIPTS): ScriptCommand {
  let scripts = defined.get(redis);
  if (!scripts) defined.set(redis, (scripts = new Map()));
  let command = scripts.get(name);
  if (!command) scripts.set(name, (command = defineScript(redis, { keys: 1, lua: SCRIPTS[name] })));
  return command;
}

/**
 * Appends entries (row → value) to their buckets in one script, a piece per bucket
 * (bucketPiece); `ttlSeconds` 0 keeps the TTL.
 */
export async function appendEntries(
  redis: Redis,
  key: string,
  entries: Iterable<[number, string]>,
  ttlSeconds: number,
): Promise<void> {
  const args: (string | number | Buffer)[] = [key, ttlSeconds];
  for (const [bucket, text] of groupEntries(entries)) args.push(bucket, bucketPiece(text));
  if (args.length > 2) await scriptOn(redis, 'append')(...args);
}

/** Buckets compacted per round trip. */
const COMPACT_CHUNK = 64;

/**
 * A plain bucket's entries deflated together, when it holds enough text to gain by it (a bucket
 * written in frames is about as small as it gets already).
 */
function compacted(stored: Buffer): Buffer | undefined {
  const parts: string[] = [];
  if (walkBucket(stored) < COMPACT_FROM) return undefined;
  walkBucket(stored, (part) => parts.push(part));
  return deflateRawSync(parts.join(''), DEFLATE);
}

/**
 * Replaces these plain buckets (bucket → stored value as read) that hold much text by their
 * compacted form, unless written since. Returns how many.
 */
async function compactStored(
  redis: Redis,
  key: string,
  stored: ReadonlyMap<number, Buffer>,
): Promise<number> {
  const compact = scriptOn(redis, 'compact');
  let done = 0;
  let args: (string | number | Buffer)[] = [key];
  const flush = async (): Promise<void> => {
    if (args.length > 1) done += Number(await compact(...args));
    args = [key];
  };
  for (const [bucket, value] of stored) {
    const packed = compacted(value);
    if (packed) args.push(bucket, value.length, packed);
    if (args.length > 3 * COMPACT_CHUNK) await flush();
  }
  await flush();
  return done;
}

/**
 * Deflates these buckets of a hash that hold much text, once no entry will be added to them
 * (every row of a results bucket has its result). A bucket written meanwhile is left plain.
 * Returns how many.
 */
export async function compactFields(
  redis: Redis,
  key: string,
  buckets: readonly number[],
): Promise<number> {
  let done = 0;
  for (let start = 0; start < buckets.length; start += COMPACT_CHUNK) {
    const part = buckets.slice(start, start + COMPACT_CHUNK);
    const values = await redis.hmgetBuffer(key, ...part.map(plainField));
    const stored = new Map<number, Buffer>();
    part.forEach((bucket, index) => {
      const value = values[index];
      if (value) stored.set(bucket, value);
    });
    done += await compactStored(redis, key, stored);
  }
  return done;
}

/**
 * Deflates every plain bucket of a hash that holds much text and that nothing writes to any
 * more (a settled import's results or undo entries), as the scan reads them. Returns how many.
 */
export async function compactBuckets(redis: Redis, key: string): Promise<number> {
  let done = 0;
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscanBuffer(key, cursor, 'MATCH', 'b*', 'COUNT', 256);
    const stored = new Map<number, Buffer>();
    for (let index = 0; index < flat.length; index += 2) {
      const field = flat[index]!.toString('latin1');
      if (/^b\d+$/.test(field)) stored.set(Number(field.slice(1)), flat[index + 1]!);
    }
    done += await compactStored(redis, key, stored);
    cursor = next.toString('latin1');
  } while (cursor !== '0');
  return done;
}
