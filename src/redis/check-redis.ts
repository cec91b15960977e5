/**
 * What each process checks of Redis when it starts, so that a wrong Redis is one clear line and
 * an exit, never a worker spinning on errors: that it answers, that it is what the
 * configuration says (one node, a Cluster, a Sentinel set), that it runs Lua scripts, and
 * whether it may evict keys (a warning: an evicting Redis loses jobs and results).
 */
import { Redis } from 'ioredis';
import { PorterError } from '../errors/porter-error.js';
import {
  createRedisConnection,
  describeRedis,
  redisMode,
  type RedisMode,
  type RedisSettings,
} from './connect.js';

export interface RedisCheckOptions {
  timeoutMs?: number;
  /** Where the eviction warning goes. */
  warn?: (message: string) => void;
  /** Only that it answers (`porter dev` waiting for the Redis it started). @defaultValue false */
  answersOnly?: boolean;
}

/** The `redis_mode` INFO gives: standalone, cluster or sentinel. */
function infoField(info: string, field: string): string | undefined {
  const line = info.split(/\r?\n/).find((entry) => entry.startsWith(`${field}:`));
  return line?.slice(field.length + 1).trim();
}

const HOW_TO_SET: Record<string, string> = {
  cluster: 'set REDIS_CLUSTER_NODES=host:port,… (its nodes) instead',
  sentinel: 'set REDIS_SENTINELS=host:port,… and REDIS_SENTINEL_NAME instead',
  standalone: 'set REDIS_URL to it instead',
};

const MODE_NAMES: Record<RedisMode, string> = {
  single: 'a single Redis',
  cluster: 'a Redis Cluster',
  sentinel: 'a Sentinel',
};

function unsuitable(message: string, cause?: unknown): PorterError {
  return new PorterError('PORTER_REDIS_UNSUITABLE', message, { cause });
}

function unavailable(settings: RedisSettings, cause: unknown): PorterError {
  const reason = (cause as Error | undefined)?.message?.split('\n')[0]?.slice(0, 200);
  return new PorterError(
    'PORTER_REDIS_UNAVAILABLE',
    `no Redis answers at ${describeRedis(settings)
      .replace(/^the /, '')
      .replace(
        /^Redis at /,
        '',
      )}${reason ? ` (${reason})` : ''}: start one (redis-server --port 6379, or docker compose up -d redis) or set REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS`,
    { cause },
  );
}

/** INFO server of the first node the configuration names (a seed node, a Sentinel, the URL). */
async function firstNodeMode(settings: RedisSettings, timeoutMs: number): Promise<string> {
  const mode = redisMode(settings);
  const first =
    mode === 'cluster'
      ? settings.REDIS_CLUSTER_NODES![0]!
      : mode === 'sentinel'
        ? settings.REDIS_SENTINELS![0]!
        : undefined;
  const probe = first
    ? new Redis({
        host: first.host,
        port: first.port,
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: timeoutMs,
        enableOfflineQueue: false,
        ...(settings.REDIS_TLS ? { tls: {} } : {}),
        ...(mode === 'sentinel'
          ? {
              username: settings.REDIS_SENTINEL_USERNAME,
              password: settings.REDIS_SENTINEL_PASSWORD,
            }
          : { username: settings.REDIS_USERNAME, password: settings.REDIS_PASSWORD }),
      })
    : createRedisConnection(settings, 'probe', { timeoutMs });
  probe.on('error', () => {});
  try {
    await probe.connect();
    const info = await probe.info('server');
    return infoField(info, 'redis_mode') ?? 'standalone';
  } catch (error) {
    throw unavailable(settings, error);
  } finally {
    probe.disconnect();
  }
}

/**
 * Throws PORTER_REDIS_UNAVAILABLE when Redis does not answer, PORTER_REDIS_UNSUITABLE when it is
 * not what the configuration says or refuses scripts; warns when it may evict keys.
 */
export async function checkRedis(
  settings: RedisSettings,
  options: RedisCheckOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const mode = redisMode(settings);
  const found = await firstNodeMode(settings, timeoutMs);
  const expected = { single: 'standalone', cluster: 'cluster', sentinel: 'sentinel' }[mode];
  if (found !== expected) {
    throw unsuitable(
      `${describeRedis(settings)} is ${found === 'standalone' ? 'a single Redis' : `a ${found === 'cluster' ? 'Cluster node' : 'Sentinel'}`}, not ${MODE_NAMES[mode]}: ${HOW_TO_SET[found] ?? 'check the REDIS_* variables'}`,
    );
  }
  if (options.answersOnly) return;
  const redis = createRedisConnection(settings, 'probe', { timeoutMs });
  redis.on('error', () => {});
  try {
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      throw unavailable(settings, error);
    }
    try {
      await redis.eval('return 1', 0);
    } catch (error) {
      throw unsuitable(
        `${describeRedis(settings)} refuses Lua scripts (${(error as Error).message.slice(0, 120)}): porter needs EVAL and EVALSHA (allow them to porter's ACL user)`,
        error,
      );
    }
    let policy: string | undefined;
    try {
      policy = infoField(await redis.info('memory'), 'maxmemory_policy');
    } catch {
      policy = undefined;
    }
    if (policy !== undefined && policy !== 'noeviction') {
      options.warn?.(
        `${describeRedis(settings)} has maxmemory-policy ${policy}: when full it evicts keys, and porter's jobs and results with them; set maxmemory-policy noeviction`,
      );
    }
  } finally {
    redis.disconnect();
  }
}
