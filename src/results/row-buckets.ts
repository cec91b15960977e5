/**
 * Per-row values kept a bucket of rows at a time: one hash field per 64 rows (`b<bucket>`)
 * instead of one per row, so Redis keeps one entry's overhead for 64 records. A bucket is a string of entries
 * `RS row US value` (RS = U+001E, US = U+001F; a value is JSON, which writes both escaped, so
 * neither can occur inside one). Entries are appended; when a row appears twice the last
 * entry counts. Once an import has settled, each bucket is compacted: deflated into the field
 * `z<bucket>` and its plain field removed (compactBuckets), since nothing writes to it any more.
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
    redis.hmget(key, ...buckets.map(plainField)),
    redis.hmgetBuffer(key, ...buckets.map(compactField)),
  ]);
  for (let index = 0; index < buckets.length; index++) {
    const compact = packed[index];
    if (compact) parseBucket(inflateRawSync(compact).toString('utf8'), found);
    const text = plain[index];
    if (text) parseBucket(text, found);
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
 * entries are only ever appended, so an unchanged length is unchanged text.
 */
const COMPACT = `
local done = 0
for i = 1, #ARGV, 3 do
  local plain = 'b' .. ARGV[i]
  if redis.call('HSTRLEN', KEYS[1], plain) == tonumber(ARGV[i + 1]) then
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

/** Appends entries (row → value) to their buckets in one script; `ttlSeconds` 0 keeps the TTL. */
export async function appendEntries(
  redis: Redis,
  key: string,
  entries: Iterable<[number, string]>,
  ttlSeconds: number,
): Promise<void> {
  const args: (string | number)[] = [key, ttlSeconds];
  for (const [bucket, text] of groupEntries(entries)) args.push(bucket, text);
  if (args.length > 2) await scriptOn(redis, 'append')(...args);
}

/**
 * The fastest level: 64 like results deflate to within 1 % of the default level's size
 * (7,415 bytes → 1,144 against 1,131), in about half the time.
 */
const DEFLATE = { level: 1 };

/** Buckets compacted per round trip. */
const COMPACT_CHUNK = 64;

/**
 * Deflates these buckets of a hash, once no entry will be added to them (every row of a
 * results bucket has its result). A bucket written meanwhile is left plain. Returns how many.
 */
export async function compactFields(
  redis: Redis,
  key: string,
  buckets: readonly number[],
): Promise<number> {
  const compact = scriptOn(redis, 'compact');
  let compacted = 0;
  for (let start = 0; start < buckets.length; start += COMPACT_CHUNK) {
    const part = buckets.slice(start, start + COMPACT_CHUNK);
    const texts = await redis.hmgetBuffer(key, ...part.map(plainField));
    const args: (string | number | Buffer)[] = [key];
    part.forEach((bucket, index) => {
      const text = texts[index];
      if (text) args.push(bucket, text.length, deflateRawSync(text, DEFLATE));
    });
    if (args.length > 1) compacted += Number(await compact(...args));
  }
  return compacted;
}

/**
 * Deflates every plain bucket of a hash that nothing writes to any more (a settled import's
 * results or undo entries). Returns how many.
 */
export async function compactBuckets(redis: Redis, key: string): Promise<number> {
  const plain = new Set<number>();
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscanBuffer(key, cursor, 'MATCH', 'b*', 'COUNT', 256);
    for (let index = 0; index < flat.length; index += 2) {
      const field = flat[index]!.toString('latin1');
      if (/^b\d+$/.test(field)) plain.add(Number(field.slice(1)));
    }
    cursor = next.toString('latin1');
  } while (cursor !== '0');
  return compactFields(redis, key, [...plain]);
}
