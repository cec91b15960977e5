/**
 * The Lua scripts that keep an import consistent. Each runs atomically in Redis, so
 * concurrent workers can neither count a row twice nor race a state change.
 *
 * Every import script takes KEYS = meta, counts, results, staged, done (see import-keys.ts)
 * and ARGV[1..3] = ttl seconds, now (ISO), events channel.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import { BUCKET_LUA } from './row-buckets.js';

/** Helpers shared by the scripts that can move an import to a final or settled state. */
const PRELUDE = `
local FINAL = { completed = true, completed_with_errors = true, failed = true, cancelled = true }
local ACTIVE = { queued = true, running = true, paused = true }
local ttl, now, channel = ARGV[1], ARGV[2], ARGV[3]

local function refresh_ttl()
  for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ttl) end
end

local function publish(id, state, settled)
  redis.call('PUBLISH', channel, cjson.encode({ id = id, state = state, settled = settled }))
end

-- An import settles once it is final and every record has a result: staged records go and
-- every key keeps the TTL from now. An active import whose last result is in becomes completed
-- or completed_with_errors here (failed when its streamed upload broke off: brokenUpload). An
-- import that failed while receiving never learns its total and settles at once; one cancelled
-- while receiving waits, as markReceived may still follow, and so does a streamed one that
-- failed (its batches may be running).
local function settle()
  local m = redis.call('HMGET', KEYS[1], 'id', 'state', 'total', 'settled')
  local id, state, total = m[1], m[2], tonumber(m[3]) or -1
  if not state or m[4] == '1' then return false end
  local c = redis.call('HMGET', KEYS[2], 'succeeded', 'failed', 'skipped', 'unprocessed', 'planned')
  local bad = (tonumber(c[2]) or 0) + (tonumber(c[4]) or 0)
  local done = (tonumber(c[1]) or 0) + (tonumber(c[3]) or 0) + (tonumber(c[5]) or 0) + bad
  if ACTIVE[state] then
    if total < 0 or done < total then return false end
    -- a sync learns its whole total (the server's records its file leaves out) when prepared
    if redis.call('HGET', KEYS[1], 'syncPending') == '1' then return false end
    state = bad == 0 and 'completed' or 'completed_with_errors'
    -- a sync whose plan passed its threshold planned only: it waits for approval
    if redis.call('HGET', KEYS[1], 'holdAtEnd') == '1' then state = 'held' end
    local broken = redis.call('HGET', KEYS[1], 'brokenUpload')
    if broken then state = 'failed' end
    redis.call('HSET', KEYS[1], 'state', state, 'updatedAt', now, 'finishedAt', now)
    if broken then
      redis.call('HSET', KEYS[1], 'reason', broken, 'reasonCode', 'PORTER_UPLOAD_ABORTED')
    else
      redis.call('HDEL', KEYS[1], 'reason')
    end
  elseif not FINAL[state] then
    return false
  elseif total >= 0 then
    if done < total then return false end
  elseif state ~= 'failed' or redis.call('HGET', KEYS[1], 'stream') == '1' then
    return false
  end
  redis.call('HSET', KEYS[1], 'settled', '1')
  -- a dry run keeps its records for porter apply, until the TTL
  if redis.call('HGET', KEYS[1], 'keepStaged') ~= '1' then redis.call('UNLINK', KEYS[4]) end
  refresh_ttl()
  publish(id, state, true)
  return true
end
`;

/**
 * KEYS; ARGV: ttl, now, channel, score, id, meta field/value pairs. 1 = created, 0 = id taken.
 * The index of imports sits in another Cluster slot: the caller adds the id to it afterwards.
 */
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('HSET', KEYS[2], 'succeeded', 0, 'failed', 0, 'skipped', 0, 'unprocessed', 0, 'planned', 0)
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
`;

/**
 * Appends to the staged list a pack at a time (staged-packs.ts). ARGV[4] = the records staged
 * before, as the caller counted them; ARGV[5] = the records added; ARGV[6] = the rest of the last
 * pack ('' when it was full); ARGV[7..] = new packs. The count is kept in the meta field `staged`
 * (an import staged before packs has none: its list's length is its count). Returns the new
 * count, or -3 when the caller's count is not the import's (nothing written).
 */
const STAGE_PACKS = `
local function staged_count(stored) return tonumber(stored) or redis.call('LLEN', KEYS[4]) end
local function stage_packs(before)
  if before ~= tonumber(ARGV[4]) then return -3 end
  if ARGV[6] ~= '' then
    local last = redis.call('LINDEX', KEYS[4], -1)
    if not last then return -3 end
    redis.call('LSET', KEYS[4], -1, last .. ARGV[6])
  end
  if #ARGV >= 7 then redis.call('RPUSH', KEYS[4], unpack(ARGV, 7)) end
  local count = before + tonumber(ARGV[5])
  redis.call('HSET', KEYS[1], 'staged', count)
  return count
end
`;

/**
 * ARGV as STAGE_PACKS. Appends only while receiving (a streamed import also while paused before
 * its upload is whole): -1 missing, -2 wrong state, -3 miscounted.
 */
const STAGE = `
local m = redis.call('HMGET', KEYS[1], 'state', 'staged', 'stream', 'total')
local state = m[1]
if not state then return -1 end
local streaming = m[3] == '1' and (tonumber(m[4]) or -1) < 0 and state == 'paused'
if state ~= 'receiving' and not streaming then return -2 end
local count = stage_packs(staged_count(m[2]))
refresh_ttl()
return count
`;

/**
 * ARGV: ttl, now, channel, total, batches. receiving → queued with the total; an import cancelled
 * meanwhile keeps its state but learns the total. Either records when (receivedAt). Returns {meta, counts}, -1 missing, -2 when
 * already received with another total.
 */
const MARK_RECEIVED = `
local m = redis.call('HMGET', KEYS[1], 'state', 'total', 'settled')
local state, stored = m[1], tonumber(m[2]) or -1
if not state then return -1 end
local total = tonumber(ARGV[4])
if state == 'receiving' then
  redis.call('HSET', KEYS[1], 'state', 'queued', 'total', total, 'batches', ARGV[5], 'updatedAt', now, 'receivedAt', now)
elseif stored < 0 and m[3] ~= '1' then
  redis.call('HSET', KEYS[1], 'total', total, 'batches', ARGV[5], 'updatedAt', now, 'receivedAt', now)
elseif stored >= 0 and stored ~= total then
  return -2
end
refresh_ttl()
settle()
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]) }
`;

/**
 * ARGV: ttl, now, channel, to, reason ('' = none), since (epoch ms; 0 = unguarded), now (epoch
 * ms), from states... 1 = moved, 0 = refused, -1 missing. A move out of paused records when the
 * import was resumed; a guarded move is refused when that was at or after `since`.
 */
const TRANSITION = `
local m = redis.call('HMGET', KEYS[1], 'id', 'state')
local id, state = m[1], m[2]
if not state then return -1 end
if FINAL[state] then return 0 end
local allowed = false
for i = 8, #ARGV do
  if ARGV[i] == state then allowed = true end
end
if not allowed then return 0 end
local to, reason = ARGV[4], ARGV[5]
-- only a streamed import pauses while its upload is received (its batches are going)
if state == 'receiving' and to == 'paused' and redis.call('HGET', KEYS[1], 'stream') ~= '1' then
  return 0
end
-- a move guarded by a time: refused when the import was resumed since (a stale decision)
local since = tonumber(ARGV[6])
if since > 0 and tonumber(redis.call('HGET', KEYS[1], 'resumedAt') or '0') >= since then
  return 0
end
if state == 'paused' and (to == 'running' or to == 'queued') then
  redis.call('HSET', KEYS[1], 'resumedAt', ARGV[7])
  -- a streamed import resumed before its upload is whole goes on receiving it
  local r = redis.call('HMGET', KEYS[1], 'stream', 'total')
  if r[1] == '1' and (tonumber(r[2]) or -1) < 0 then to = 'receiving' end
end
redis.call('HSET', KEYS[1], 'state', to, 'updatedAt', now)
if reason ~= '' then
  redis.call('HSET', KEYS[1], 'reason', reason)
else
  redis.call('HDEL', KEYS[1], 'reason')
end
if to == 'running' then redis.call('HSETNX', KEYS[1], 'startedAt', now) end
-- the pause's reason outlives the pause: a summary of the import can still say why it stopped
if to == 'paused' and reason ~= '' then redis.call('HSET', KEYS[1], 'pausedBecause', reason) end
if FINAL[to] then redis.call('HSET', KEYS[1], 'finishedAt', now) end
refresh_ttl()
if not settle() and FINAL[to] then publish(id, to, redis.call('HGET', KEYS[1], 'settled') == '1') end
return 1
`;

/**
 * KEYS: the five, then the send journal's bitmap and its earlier set; ARGV: ttl, now, channel,
 * reason, code. An active import none of whose rows was ever handed to the admin server, and
 * none of whose records succeeded, ends failed with the reason and its code: nothing could be
 * sent. The journal marks rows only while the state lets calls go, in one step with reading it,
 * so no call of the import leaves after this. 1 = failed now, 0 = something was sent (or the
 * import ended already), -1 missing.
 */
const FAIL_UNSENT = `
local m = redis.call('HMGET', KEYS[1], 'id', 'state', 'stream')
local id, state = m[1], m[2]
if not state then return -1 end
-- a streamed import's batches go while it is receiving
if not ACTIVE[state] and not (state == 'receiving' and m[3] == '1') then return 0 end
if redis.call('BITCOUNT', KEYS[6]) > 0 or redis.call('SCARD', KEYS[7]) > 0 then return 0 end
if (tonumber(redis.call('HGET', KEYS[2], 'succeeded')) or 0) > 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'failed', 'reason', ARGV[4], 'reasonCode', ARGV[5],
  'updatedAt', now, 'finishedAt', now)
refresh_ttl()
if not settle() then publish(id, 'failed', redis.call('HGET', KEYS[1], 'settled') == '1') end
return 1
`;

/**
 * ARGV: ttl, now, channel, the first byte of `done` the rows' bits fall in, those bytes with the
 * rows' bits set (bit row − 1; see rowBits in result-writer.ts), the highest row, then the numbers
 * of bucket and counter pairs, then (bucket, text) pairs (the rows' entries, joined per bucket by
 * the caller, see row-buckets.ts), (counter, n) pairs and ("why:status:code", message) pairs.
 * The rows are claimed a byte of the bitmap at a time, and when none had a result, the entries
 * are appended and the counters added as given: nothing here reads a record. When some had one
 * (a batch that runs twice), nothing is written and {-1, their bits} is returned, for the caller
 * to send the rest again. Otherwise returns {written, meta, counts, full buckets}, or nil when
 * the import does not exist.
 */
const RECORD_RESULTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local from, mine = tonumber(ARGV[4]), ARGV[5]
local written = 0
if #mine > 0 then
  local current = redis.call('GETRANGE', KEYS[5], from, from + #mine - 1)
  local merged, taken = {}, {}
  for i = 1, #mine do
    local m, c = string.byte(mine, i), string.byte(current, i) or 0
    local both = bit.band(m, c)
    if both ~= 0 then
      for j = 0, 7 do
        if bit.band(both, bit.rshift(128, j)) ~= 0 then taken[#taken + 1] = (from + i - 1) * 8 + j end
      end
    end
    merged[i] = string.char(bit.bor(m, c))
  end
  if #taken > 0 then return { -1, taken } end
  redis.call('SETRANGE', KEYS[5], from, table.concat(merged))
  written = tonumber(ARGV[6])
end
local buckets, counters = tonumber(ARGV[8]), tonumber(ARGV[9])
local at = 10
-- a bucket whose every row has its result is full: the caller compacts it
local full = {}
for i = at, at + 2 * buckets - 1, 2 do
  local field = 'b' .. ARGV[i]
  redis.call('HSET', KEYS[3], field, (redis.call('HGET', KEYS[3], field) or '') .. ARGV[i + 1])
  if bucket_full(KEYS[5], tonumber(ARGV[i])) then full[#full + 1] = tonumber(ARGV[i]) end
end
at = at + 2 * buckets
for i = at, at + 2 * counters - 1, 2 do redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) end
at = at + 2 * counters
for i = at, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
if written > 0 then
  redis.call('HSET', KEYS[1], 'updatedAt', now)
  if tonumber(ARGV[7]) > (tonumber(redis.call('HGET', KEYS[1], 'maxRow')) or 0) then
    redis.call('HSET', KEYS[1], 'maxRow', ARGV[7])
  end
end
refresh_ttl()
settle()
return { written, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), full }
`;

/**
 * A sync's preparation starts adding the server's records its file leaves out. The first time,
 * the upload's total and staged count are noted, with the packs that hold them and the length of
 * the last; a preparation run again first drops what an earlier run added. ARGV: ttl, now,
 * channel. Returns the upload's total, or -1 when missing.
 */
const BEGIN_SERVER_ROWS = `
local m = redis.call('HMGET', KEYS[1], 'state', 'uploadTotal', 'uploadStaged', 'total', 'staged',
  'uploadPacks', 'uploadLast')
if not m[1] then return -1 end
if m[2] then
  local staged = tonumber(m[3])
  if staged == 0 then
    redis.call('DEL', KEYS[4])
  elseif m[6] then
    redis.call('LTRIM', KEYS[4], 0, tonumber(m[6]) - 1)
    local last = redis.call('LINDEX', KEYS[4], -1)
    if last then redis.call('LSET', KEYS[4], -1, string.sub(last, 1, tonumber(m[7]))) end
  else
    -- noted by a version before packs: a record per element
    redis.call('LTRIM', KEYS[4], 0, staged - 1)
  end
  if m[5] then redis.call('HSET', KEYS[1], 'staged', staged) end
  redis.call('HSET', KEYS[1], 'total', m[2])
  return tonumber(m[2])
end
local packs = redis.call('LLEN', KEYS[4])
local last = packs > 0 and redis.call('LINDEX', KEYS[4], -1) or ''
redis.call('HSET', KEYS[1], 'uploadTotal', m[4], 'uploadStaged', staged_count(m[5]),
  'uploadPacks', packs, 'uploadLast', #last)
return tonumber(m[4])
`;

/** ARGV as STAGE_PACKS. Appends server rows and counts them in the total; -1 missing, -3 miscounted. */
const ADD_SERVER_ROWS = `
local m = redis.call('HMGET', KEYS[1], 'state', 'staged')
if not m[1] then return -1 end
local count = stage_packs(staged_count(m[2]))
if count >= 0 then redis.call('HINCRBY', KEYS[1], 'total', tonumber(ARGV[5])) end
refresh_ttl()
return count
`;

/**
 * ARGV: ttl, now, channel, batches, sync JSON, hold ('1' plans only and ends held). The total is
 * whole: the import may settle now.
 */
const END_SERVER_ROWS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'batches', ARGV[4], 'sync', ARGV[5], 'updatedAt', now)
if ARGV[6] == '1' then redis.call('HSET', KEYS[1], 'holdAtEnd', '1', 'keepStaged', '1') end
redis.call('HDEL', KEYS[1], 'syncPending')
refresh_ttl()
settle()
return 1
`;

/**
 * A streamed import's batches, claimed by whoever queues them (the producer as its upload comes
 * in, the preparation once it is done). ARGV: ttl, now, channel, then the jobs' sizes: small,
 * the records cut into small jobs, large (streamJobs). Nothing is claimed before the import is
 * prepared (its lookup is set), once it ended, or once its upload broke off; else the staged
 * records past queuedUpTo that fill whole jobs (all of them once the upload is whole) are, as
 * streamBoundary cuts them. Returns {from, to}: the records [from, to) whose jobs the caller
 * queues.
 */
const CLAIM_STREAM = `
local m = redis.call('HMGET', KEYS[1], 'state', 'lookup', 'staged', 'total', 'queuedUpTo',
  'brokenUpload')
local from = tonumber(m[5]) or 0
if not m[1] or not m[2] or FINAL[m[1]] or m[6] then return { from, from } end
local staged = tonumber(m[3]) or 0
local small, small_up_to, large = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local to = staged
if (tonumber(m[4]) or -1) >= 0 then
elseif staged < small_up_to then to = math.floor(staged / small) * small
else to = small_up_to + math.floor((staged - small_up_to) / large) * large end
if to <= from then return { from, from } end
redis.call('HSET', KEYS[1], 'queuedUpTo', to)
return { from, to }
`;

/** KEYS: meta; ARGV: field/value pairs. Updates only an existing import: 1 = done, 0 = missing. */
const UPDATE_META = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

interface ScriptDefinition {
  command: string;
  numberOfKeys: number;
  lua: string;
  readOnly?: boolean;
}

// Command names carry a porter prefix because the connection may be shared with other modules.
const SCRIPTS = {
  create: { command: 'porterImportCreate', numberOfKeys: 5, lua: CREATE },
  stage: { command: 'porterImportStage', numberOfKeys: 5, lua: PRELUDE + STAGE_PACKS + STAGE },
  markReceived: {
    command: 'porterImportMarkReceived',
    numberOfKeys: 5,
    lua: PRELUDE + MARK_RECEIVED,
  },
  transition: { command: 'porterImportTransition', numberOfKeys: 5, lua: PRELUDE + TRANSITION },
  failUnsent: { command: 'porterImportFailUnsent', numberOfKeys: 7, lua: PRELUDE + FAIL_UNSENT },
  recordResults: {
    command: 'porterImportRecordResults',
    numberOfKeys: 5,
    lua: PRELUDE + BUCKET_LUA + RECORD_RESULTS,
  },
  updateMeta: { command: 'porterImportUpdateMeta', numberOfKeys: 1, lua: UPDATE_META },
  claimStream: { command: 'porterImportClaimStream', numberOfKeys: 5, lua: PRELUDE + CLAIM_STREAM },
  beginServerRows: {
    command: 'porterImportBeginServerRows',
    numberOfKeys: 5,
    lua: PRELUDE + STAGE_PACKS + BEGIN_SERVER_ROWS,
  },
  addServerRows: {
    command: 'porterImportAddServerRows',
    numberOfKeys: 5,
    lua: PRELUDE + STAGE_PACKS + ADD_SERVER_ROWS,
  },
  endServerRows: {
    command: 'porterImportEndServerRows',
    numberOfKeys: 5,
    lua: PRELUDE + END_SERVER_ROWS,
  },
} as const satisfies Record<string, ScriptDefinition>;

export type ImportScriptName = keyof typeof SCRIPTS;
export type ScriptArg = string | number | Buffer;

type ScriptCommand = (...args: ScriptArg[]) => unknown;

/** Registers the scripts on a connection; ioredis then sends EVALSHA and falls back to EVAL. */
export function defineImportScripts(redis: Redis): void {
  for (const script of Object.values(SCRIPTS) as ScriptDefinition[]) {
    redis.defineCommand(script.command, {
      numberOfKeys: script.numberOfKeys,
      lua: script.lua,
      readOnly: script.readOnly ?? false,
    });
  }
}

function commandOf(target: Redis | ChainableCommander, name: ImportScriptName): ScriptCommand {
  // defineCommand adds methods at runtime that ioredis' types cannot know about.
  const command = (target as unknown as Record<string, ScriptCommand | undefined>)[
    SCRIPTS[name].command
  ];
  if (!command) throw new Error(`import script ${name} is not defined on this connection`);
  return command;
}

/** Runs one script; the reply is checked by the caller. */
export async function runImportScript(
  redis: Redis,
  name: ImportScriptName,
  keys: string[],
  args: ScriptArg[],
): Promise<unknown> {
  return commandOf(redis, name).call(redis, ...keys, ...args);
}

/** Queues one script on a pipeline. */
export function queueImportScript(
  pipeline: ChainableCommander,
  name: ImportScriptName,
  keys: string[],
  args: ScriptArg[],
): void {
  commandOf(pipeline, name).call(pipeline, ...keys, ...args);
}
