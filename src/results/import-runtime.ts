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
 * ARGV: a flag ('1' when a repeated key is a duplicate), then triplets of key, look-alike key
 * ('' when not checked) and row. KEYS[1] holds key → first row; KEYS[2] look-alike key →
 * "row:key" of the first key that had it. A record is answered {0} (first), {1, row} (its key
 * came before) or {2, row, key} (a different key that looks the same came before); only a
 * first record claims anything.
 */
const CLAIM_KEYS = `
local answers = {}
local refuseRepeats = ARGV[1] == '1'
for i = 2, #ARGV - 2, 3 do
  local key, lookalike, row = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local answer = {0}
  if lookalike ~= '' then
    if redis.call('HSETNX', KEYS[2], lookalike, row .. ':' .. key) == 1 then
      redis.call('HSETNX', KEYS[1], key, row)
    else
      -- the look-alike form is known: from this very key (a repeat) or from another one
      local other = redis.call('HGET', KEYS[2], lookalike)
      local colon = string.find(other, ':', 1, true)
      local otherKey = string.sub(other, colon + 1)
      if otherKey ~= key then
        answer = {2, tonumber(string.sub(other, 1, colon - 1)), otherKey}
      elseif refuseRepeats then
        answer = {1, tonumber(redis.call('HGET', KEYS[1], key))}
      end
    end
  elseif redis.call('HSETNX', KEYS[1], key, row) == 0 and refuseRepeats then
    answer = {1, tonumber(redis.call('HGET', KEYS[1], key))}
  end
  answers[#answers + 1] = answer
end
redis.call('EXPIRE', KEYS[1], 86400)
redis.call('EXPIRE', KEYS[2], 86400)
return answers
`;

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

/**
 * The natural keys an upload has shown so far, to find a record given twice while receiving,
 * and their look-alike forms, to find two keys that cannot be told apart. Kept in Redis, so an
 * upload larger than memory is checked whole.
 */
export class UploadKeys {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(importId: string): string {
    return uploadKeysKey(this.prefix, importId);
  }

  private lookalikesKey(importId: string): string {
    return uploadLookalikesKey(this.prefix, importId);
  }

  /** For each record, the row that showed its key first, or undefined when it is the first. */
  async claim(
    importId: string,
    records: readonly { key: string; row: number }[],
  ): Promise<(number | undefined)[]> {
    const claims = await this.claimKeys(importId, records, { refuseRepeats: true });
    return claims.map((claim) => (claim.kind === 'repeat' ? claim.row : undefined));
  }

  /**
   * Claims each record's key and look-alike key, in order. A repeated key is answered
   * `repeat` when `refuseRepeats` (deletes may repeat a key harmlessly); a key whose look-alike
   * form another key claimed first is answered `lookalike`. Only `first` records claim.
   */
  async claimKeys(
    importId: string,
    records: readonly KeyToClaim[],
    options: { refuseRepeats: boolean },
  ): Promise<KeyClaim[]> {
    if (records.length === 0) return [];
    const args = records.flatMap((record) => [
      record.key,
      record.lookalike ?? '',
      String(record.row),
    ]);
    const answers = (await this.redis.eval(
      CLAIM_KEYS,
      2,
      this.key(importId),
      this.lookalikesKey(importId),
      options.refuseRepeats ? '1' : '0',
      ...args,
    )) as Array<[0] | [1, number] | [2, number, string]>;
    return answers.map((answer): KeyClaim => {
      if (answer[0] === 1) return { kind: 'repeat', row: answer[1] };
      if (answer[0] === 2) return { kind: 'lookalike', row: answer[1], key: answer[2] };
      return { kind: 'first' };
    });
  }

  /** Forgets the keys once the upload is received. */
  async release(importId: string): Promise<void> {
    await this.redis.unlink(this.key(importId), this.lookalikesKey(importId));
  }
}
