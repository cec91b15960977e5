/**
 * Small Redis operations of several commands as one script each: a write with its key's TTL, or
 * two reads at one instant. One command instead of MULTI, the commands and EXEC (four or more
 * for Redis, and a transaction for the client), and as atomic: a key is never left without its
 * TTL. `defineScript` makes any such script a function.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface ScriptSpec {
  /** How many of the arguments are keys. */
  keys: number;
  lua: string;
}

export type ScriptCommand = (...args: (string | number | Buffer)[]) => Promise<unknown>;

interface Script extends ScriptSpec {
  sha: string;
}

function scriptOf(spec: ScriptSpec): Script {
  return { ...spec, sha: createHash('sha1').update(spec.lua).digest('hex') };
}

/** The scripts each connection has sent in full: Redis knows them from then on. */
const sentOn = new WeakMap<Redis, Set<string>>();

/**
 * Runs a script: in full (EVAL, which also loads it) the first time on a connection, by its hash
 * (EVALSHA) after that, and in full again should Redis have forgotten it (a restart). Both are
 * plain commands, so they keep their place among the connection's other commands and ride its
 * auto-pipeline from any tick. ioredis' `defineCommand` cannot: an auto-pipeline opened before
 * the definition lacks the method, and the pipeline's replies then no longer match their callers.
 */
async function runScript(
  redis: Redis,
  script: Script,
  args: (string | number | Buffer)[],
): Promise<unknown> {
  let sent = sentOn.get(redis);
  if (!sent) sentOn.set(redis, (sent = new Set()));
  if (!sent.has(script.sha)) {
    sent.add(script.sha);
    return redis.eval(script.lua, script.keys, ...args);
  }
  try {
    return await redis.evalsha(script.sha, script.keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(script.lua, script.keys, ...args);
  }
}

/** A script as a function of its keys and arguments, on one connection. */
export function defineScript(redis: Redis, spec: ScriptSpec): ScriptCommand {
  const script = scriptOf(spec);
  return (...args) => runScript(redis, script, args);
}

/** KEYS[1] a hash; ARGV ttl, field, value, … */
const HASH_SET = scriptOf({
  keys: 1,
  lua: `
-- unpack takes a few thousand values at most: 500 pairs per HSET
for i = 2, #ARGV, 1000 do redis.call('HSET', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1`,
});

/** KEYS[1] a hash; ARGV ttl, field, amount, … */
const HASH_ADD = scriptOf({
  keys: 1,
  lua: `
for i = 2, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1`,
});

/** KEYS two hashes; both read at one instant. */
const READ_TWO = scriptOf({
  keys: 2,
  lua: `return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]) }`,
});

type HashWrite = (
  redis: Redis,
  key: string,
  pairs: readonly (string | number)[],
  ttlSeconds: number,
) => Promise<void>;

/** Field/value pairs written to a hash by one of the scripts, with the hash's TTL. */
function hashWrite(script: Script): HashWrite {
  return async (redis, key, pairs, ttlSeconds) => {
    if (pairs.length === 0) return;
    await runScript(redis, script, [key, ttlSeconds, ...pairs]);
  };
}

/** HSET field/value pairs, and the hash's TTL. */
export const setHashExpiring = hashWrite(HASH_SET);

/** HINCRBY of each field/amount pair, and the hash's TTL. */
export const addToHashExpiring = hashWrite(HASH_ADD);

/** HGETALL of two hashes at one instant, as flat [field, value, …] arrays. */
export async function readTwoHashes(
  redis: Redis,
  first: string,
  second: string,
): Promise<[unknown, unknown]> {
  return (await runScript(redis, READ_TWO, [first, second])) as [unknown, unknown];
}
