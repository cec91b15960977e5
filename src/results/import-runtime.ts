/**
 * What workers learn about an import while it runs, shared across workers: the batch size the
 * server accepts, and call counters. Kept beside the import's other keys, with the same TTL.
 */
import type { Redis } from 'ioredis';
import { uploadKeysKey, uploadLookalikesKey } from './import-keys.js';
import { addToHashExpiring, defineScript, type ScriptCommand } from '../util/redis-commands.js';
import { importKeyBase } from '../redis/key-tags.js';

const LOWER = `
local current = tonumber(redis.call('HGET', KEYS[1], 'batchSize'))
local wanted = tonumber(ARGV[1])
if current == nil or wanted < current then redis.call('HSET', KEYS[1], 'batchSize', wanted) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return tonumber(redis.call('HGET', KEYS[1], 'batchSize'))
`;

export interface CallCounters {
  writeCalls: number;
  reconcileReads: number;
  lookupReads: number;
}

export class ImportRuntime {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  private key(importId: string): string {
    return `${importKeyBase(this.prefix, importId)}:runtime`;
  }

  /** Records per call the server accepts for this import, once a 413 taught it; else undefined. */
  async batchSize(importId: string): Promise<number | undefined> {
    const value = await this.redis.hget(this.key(importId), 'batchSize');
    return value === null ? undefined : Number(value);
  }

  /** Lowers the working batch size (never raises it); returns the size now in force. */
  async lowerBatchSize(importId: string, size: number): Promise<number> {
    const wanted = Math.max(1, Math.floor(size));
    return Number(await this.redis.eval(LOWER, 1, this.key(importId), wanted, this.ttlSeconds));
  }

  /** Adds a batch's calls to the import's totals. */
  async addCalls(importId: string, counters: CallCounters): Promise<void> {
    await addToHashExpiring(
      this.redis,
      this.key(importId),
      [
        'writeCalls',
        counters.writeCalls,
        'reconcileReads',
        counters.reconcileReads,
        'lookupReads',
        counters.lookupReads,
      ],
      this.ttlSeconds,
    );
  }

  /** The import's call totals so far. */
  async calls(importId: string): Promise<CallCounters> {
    const values = await this.redis.hmget(
      this.key(importId),
      'writeCalls',
      'reconcileReads',
      'lookupReads',
    );
    const [writeCalls, reconcileReads, lookupReads] = values.map((value) => Number(value ?? 0));
    return {
      writeCalls: writeCalls ?? 0,
      reconcileReads: reconcileReads ?? 0,
      lookupReads: lookupReads ?? 0,
    };
  }
}

const RECORD_CALL = `
local bucket = ARGV[1]
-- a call started before the last resume says nothing about the server now
local reset = tonumber(redis.call('HGET', KEYS[1], 'resetAt') or '0')
if tonumber(ARGV[5]) >= reset then
  redis.call('HINCRBY', KEYS[1], bucket .. ':calls', 1)
  if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], bucket .. ':failures', 1) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local calls, failures = 0, 0
local oldest = tonumber(bucket) - tonumber(ARGV[3]) + 1
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local b, kind = string.match(all[i], '^(%d+):(%a+)$')
  if b and tonumber(b) >= oldest then
    if kind == 'calls' then calls = calls + tonumber(all[i + 1]) else failures = failures + tonumber(all[i + 1]) end
  elseif b then
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return { calls, failures }
`;

/** Seconds per health bucket: the window is counted in buckets of this size. */
const BUCKET_MS = 5_000;

/** Health of the calls an import made: a sliding window of calls and failures, in Redis. */
export class ImportHealth {
  /** RECORD_CALL as EVALSHA: the script is sent once per connection, not with every call. */
  private readonly recordCall: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.recordCall = defineScript(redis, { keys: 1, lua: RECORD_CALL });
  }

  private key(importId: string): string {
    return `${importKeyBase(this.prefix, importId)}:health`;
  }

  /** Counts one call and returns the window's totals. */
  async record(
    importId: string,
    failed: boolean,
    windowMs: number,
    startedAt: number,
    now = Date.now(),
  ): Promise<{ calls: number; failures: number }> {
    const buckets = Math.max(1, Math.ceil(windowMs / BUCKET_MS));
    const [calls, failures] = (await this.recordCall(
      this.key(importId),
      Math.floor(now / BUCKET_MS),
      failed ? '1' : '0',
      buckets,
      windowMs + BUCKET_MS,
      startedAt,
    )) as [number, number];
    return { calls, failures };
  }

  /** Forgets the window (after a resume): calls that started before now no longer count. */
  async clear(importId: string, now = Date.now()): Promise<void> {
    await this.redis
      .multi()
      .unlink(this.key(importId), `${this.key(importId)}:probe`)
      .hset(this.key(importId), 'resetAt', now)
      .pexpire(this.key(importId), 24 * 3600 * 1000)
      .exec();
  }

  /** Starts a cool-down in which no batch may probe: called when the import is paused. */
  async holdProbes(importId: string, cooldownMs: number): Promise<void> {
    await this.redis.set(`${this.key(importId)}:probe`, '1', 'PX', cooldownMs);
  }

  /** One probe per cool-down: true for the batch that may try the server. */
  async takeProbe(importId: string, cooldownMs: number): Promise<boolean> {
    return (
      (await this.redis.set(`${this.key(importId)}:probe`, '1', 'PX', cooldownMs, 'NX')) === 'OK'
    );
  }
}

/**
 * ARGV: two flags (the first '1' when a repeated key is a duplicate; the second '1' when a key
 * with a look-alike form goes in KEYS[1] too), the rows (runs of rows that follow one
 * another as "first-last", joined by commas: "1-1999,2001"), then each
 * record's key and look-alike key ('' when not checked): all of them joined by NUL in one value,
 * or (when one holds a NUL) one value each. KEYS[2] holds look-alike key → "row:key" of the
 * first key that had it, which names the key too; KEYS[1] key → first row, for a key without a
 * look-alike form, or every key under the second flag. Only a first record claims anything.
 * The answer lists the records that are not first, four values each: the record's place (from
 * 1), 1 (its key came before) or 2 (a different key that looks the same came before), the row
 * that came first, and that row's key ('' for 1); an empty list when every record is first.
 */
const CLAIM_KEYS = `
local refuseRepeats = string.sub(ARGV[1], 1, 1) == '1'
local keysToo = string.sub(ARGV[1], 2, 2) == '1'
local keys = {}
if #ARGV == 3 then
  local joined, from = ARGV[3], 1
  while true do
    local to = string.find(joined, '\\0', from, true)
    if not to then
      keys[#keys + 1] = string.sub(joined, from)
      break
    end
    keys[#keys + 1] = string.sub(joined, from, to - 1)
    from = to + 1
  end
else
  for i = 3, #ARGV do keys[#keys + 1] = ARGV[i] end
end
local refused = {}
local function refuse(place, kind, row, key)
  refused[#refused + 1] = place
  refused[#refused + 1] = kind
  refused[#refused + 1] = row
  refused[#refused + 1] = key
end
local rows = {}
for first, last in string.gmatch(ARGV[2], '(%d+)-?(%d*)') do
  for row = tonumber(first), tonumber(last ~= '' and last or first) do rows[#rows + 1] = row end
end
-- one read of every key and form the records name, and one write of those they claim: no call
-- per record. Commands take their arguments a slice at a time (Lua's unpack is bounded).
local SLICE = 2000
local function read(hash, fields)
  local found = {}
  for from = 1, #fields, SLICE do
    local part = redis.call('HMGET', hash, unpack(fields, from, math.min(from + SLICE - 1, #fields)))
    for i = 1, #part do found[from + i - 1] = part[i] end
  end
  return found
end
local function write(hash, pairs)
  for from = 1, #pairs, SLICE do
    redis.call('HSET', hash, unpack(pairs, from, math.min(from + SLICE - 1, #pairs)))
  end
end
local named, namedAt, looks, looksAt = {}, {}, {}, {}
for place = 1, #rows do
  local key, lookalike = keys[2 * place - 1], keys[2 * place]
  if lookalike == '' or keysToo then named[#named + 1] = key; namedAt[place] = #named end
  if lookalike ~= '' then looks[#looks + 1] = lookalike; looksAt[place] = #looks end
end
local storedRows = read(KEYS[1], named)
local storedLooks = read(KEYS[2], looks)
-- what this call claims, seen by its later records as if stored
local rowOf, lookOf, newRows, newLooks = {}, {}, {}, {}
for place, row in ipairs(rows) do
  local key, lookalike = keys[2 * place - 1], keys[2 * place]
  local known = rowOf[key] or (namedAt[place] and storedRows[namedAt[place]])
  if lookalike ~= '' then
    local other = lookOf[lookalike] or storedLooks[looksAt[place]]
    if not other then
      local value = row .. ':' .. key
      lookOf[lookalike] = value
      newLooks[#newLooks + 1] = lookalike; newLooks[#newLooks + 1] = value
      if keysToo and not known then
        rowOf[key] = row
        newRows[#newRows + 1] = key; newRows[#newRows + 1] = row
      end
    else
      -- the look-alike form is known: from this very key (a repeat) or from another one
      local colon = string.find(other, ':', 1, true)
      local otherKey = string.sub(other, colon + 1)
      if otherKey ~= key then
        refuse(place, 2, tonumber(string.sub(other, 1, colon - 1)), otherKey)
      elseif refuseRepeats then
        refuse(place, 1, tonumber(string.sub(other, 1, colon - 1)), '')
      end
    end
  elseif not known then
    rowOf[key] = row
    newRows[#newRows + 1] = key; newRows[#newRows + 1] = row
  elseif refuseRepeats then
    refuse(place, 1, tonumber(known), '')
  end
end
if #newRows > 0 then write(KEYS[1], newRows) end
if #newLooks > 0 then write(KEYS[2], newLooks) end
redis.call('EXPIRE', KEYS[1], 86400)
redis.call('EXPIRE', KEYS[2], 86400)
return refused
`;

/** Rows as runs of rows that follow one another: 1,2,3,5 as "1-3,5". */
export function rowRuns(rows: readonly number[]): string {
  const runs: string[] = [];
  for (let at = 0; at < rows.length;) {
    const first = rows[at]!;
    let last = first;
    while (at + 1 < rows.length && rows[at + 1] === last + 1) last = rows[++at]!;
    runs.push(last === first ? String(first) : `${first}-${last}`);
    at++;
  }
  return runs.join(',');
}

/** What claiming a record's key found. */
export type KeyClaim =
  | { kind: 'first' }
  /** The same key came before, at `row`. */
  | { kind: 'repeat'; row: number }
  /** A different key that looks the same (`key`) came before, at `row`. */
  | { kind: 'lookalike'; row: number; key: string };

export interface KeyToClaim {
  key: string;
  row: number;
  /** The key's look-alike form (lookalikeKey); absent when look-alikes are not checked. */
  lookalike?: string;
}

/** The keys of records to claim, side by side: `lookalikes` absent when none is checked. */
export interface KeysToClaim {
  keys: readonly string[];
  rows: readonly number[];
  lookalikes?: readonly string[];
}

export interface ClaimOptions {
  /** A repeated key is answered `repeat` (deletes may repeat a key harmlessly). */
  refuseRepeats: boolean;
  /**
   * false: a key with a look-alike form is kept in the look-alike hash alone, whose value names
   * it (an upload whose preparation compares every server key with those forms reads them
   * there); half the writes and bytes per key. @defaultValue true
   */
  keysToo?: boolean;
}

/** The claim of every record that was first: one object for all. */
const FIRST: KeyClaim = Object.freeze({ kind: 'first' });

/**
 * The natural keys an upload has shown so far, to find a record given twice while receiving,
 * and their look-alike forms, to find two keys that cannot be told apart. Kept in Redis, so an
 * upload larger than memory is checked whole.
 */
export class UploadKeys {
  /** CLAIM_KEYS by its hash once Redis knows it. */
  private readonly claimScript: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.claimScript = defineScript(redis, { keys: 2, lua: CLAIM_KEYS });
  }

  private key(importId: string): string {
    return uploadKeysKey(this.prefix, importId);
  }

  private lookalikesKey(importId: string): string {
    return uploadLookalikesKey(this.prefix, importId);
  }

  /**
   * Claims each record's key and look-alike key, in order. A repeated key is answered
   * `repeat` when `refuseRepeats` (deletes may repeat a key harmlessly); a key whose look-alike
   * form another key claimed first is answered `lookalike`. Only `first` records claim.
   */
  async claimKeys(
    importId: string,
    records: readonly KeyToClaim[],
    options: ClaimOptions,
  ): Promise<KeyClaim[]> {
    const checked = records.some((record) => record.lookalike !== undefined);
    return this.claimEach(
      importId,
      {
        keys: records.map((record) => record.key),
        rows: records.map((record) => record.row),
        lookalikes: checked ? records.map((record) => record.lookalike ?? '') : undefined,
      },
      options,
    );
  }

  /** claimKeys, for keys given side by side ('' in `lookalikes`: not checked). */
  async claimEach(
    importId: string,
    records: KeysToClaim,
    options: ClaimOptions,
  ): Promise<KeyClaim[]> {
    const { keys, rows, lookalikes } = records;
    const count = keys.length;
    if (count === 0) return [];
    // each record's key and look-alike key, in one value: a command's every argument costs
    const pairs = new Array<string>(2 * count);
    let joinable = true;
    for (let index = 0; index < count; index++) {
      const key = keys[index]!;
      const lookalike = lookalikes?.[index] ?? '';
      pairs[2 * index] = key;
      pairs[2 * index + 1] = lookalike;
      if (key.includes('\0') || lookalike.includes('\0')) joinable = false;
    }
    const refused = (await this.claimScript(
      this.key(importId),
      this.lookalikesKey(importId),
      (options.refuseRepeats ? '1' : '0') + (options.keysToo === false ? '0' : '1'),
      rowRuns(rows),
      ...(joinable ? [pairs.join('\0')] : pairs),
    )) as Array<number | string>;
    const claims = new Array<KeyClaim>(count).fill(FIRST);
    for (let at = 0; at < refused.length; at += 4) {
      const place = Number(refused[at]) - 1;
      const row = Number(refused[at + 2]);
      claims[place] =
        refused[at + 1] === 1
          ? { kind: 'repeat', row }
          : { kind: 'lookalike', row, key: String(refused[at + 3]) };
    }
    return claims;
  }

  /** Forgets the keys once the upload is received. */
  async release(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId), this.lookalikesKey(importId));
  }
}
