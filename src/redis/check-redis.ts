/**
 * What each process checks of Redis when it starts, so that a wrong Redis is one clear line and
 * an exit, never a worker spinning on errors: that it answers, that it is what the
 * configuration says (one node, a Cluster, a Sentinel set), that it runs Lua scripts, and
 * that it does not evict keys when full (an evicting Redis loses imports, jobs and results), unless
 * that is explicitly allowed.
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
  /** Where the warning about an evicting Redis goes, when eviction is allowed. */
  warn?: (message: string) => void;
  /** Start on a Redis that evicts keys when full (PORTER_ALLOW_EVICTION). @defaultValue false */
  allowEviction?: boolean;
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
  const reason = firstLine(cause);
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

/** One listed node (a Cluster seed node, a Sentinel) and what it answered. */
interface NodeProbe {
  node: string;
  mode?: string;
  failure?: string;
}

/** The first line of an error's message, short: what a log line or a refusal quotes. */
function firstLine(error: unknown): string | undefined {
  return (error as Error | undefined)?.message?.split('\n')[0]?.slice(0, 200);
}

/** INFO server of one node: its `redis_mode`, or why it did not answer. */
async function probeNode(
  settings: RedisSettings,
  node: { host: string; port: number },
  timeoutMs: number,
): Promise<NodeProbe> {
  const sentinel = redisMode(settings) === 'sentinel';
  const probe = new Redis({
    host: node.host,
    port: node.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    ...(settings.REDIS_TLS ? { tls: {} } : {}),
    ...(sentinel
      ? {
          username: settings.REDIS_SENTINEL_USERNAME,
          password: settings.REDIS_SENTINEL_PASSWORD,
        }
      : { username: settings.REDIS_USERNAME, password: settings.REDIS_PASSWORD }),
  });
  probe.on('error', () => {});
  const name = `${node.host}:${node.port}`;
  try {
    await probe.connect();
    const info = await probe.info('server');
    return { node: name, mode: infoField(info, 'redis_mode') ?? 'standalone' };
  } catch (error) {
    return { node: name, failure: firstLine(error) ?? 'no answer' };
  } finally {
    probe.disconnect();
  }
}

/**
 * The `redis_mode` of the configured Redis. A seed list (REDIS_CLUSTER_NODES, REDIS_SENTINELS)
 * exists to tolerate dead nodes: every listed node is asked at once, the first in the list that
 * answers speaks for them, and those that did not answer are named in a warning. Only when none
 * answers is Redis unavailable.
 */
async function configuredMode(
  settings: RedisSettings,
  timeoutMs: number,
  warn?: (message: string) => void,
): Promise<string> {
  const mode = redisMode(settings);
  const listed =
    mode === 'cluster'
      ? settings.REDIS_CLUSTER_NODES!
      : mode === 'sentinel'
        ? settings.REDIS_SENTINELS!
        : undefined;
  if (!listed) {
    const probe = createRedisConnection(settings, 'probe', { timeoutMs });
    probe.on('error', () => {});
    try {
      await probe.connect();
      return infoField(await probe.info('server'), 'redis_mode') ?? 'standalone';
    } catch (error) {
      throw unavailable(settings, error);
    } finally {
      probe.disconnect();
    }
  }
  const probes = await Promise.all(listed.map((node) => probeNode(settings, node, timeoutMs)));
  const answered = probes.find((probe) => probe.mode !== undefined);
  const silent = probes.filter((probe) => probe.failure !== undefined);
  if (!answered) {
    throw unavailable(
      settings,
      new Error(silent.map((probe) => `${probe.node}: ${probe.failure}`).join('; ')),
    );
  }
  if (silent.length > 0) {
    const variable = mode === 'cluster' ? 'REDIS_CLUSTER_NODES' : 'REDIS_SENTINELS';
    warn?.(
      `${variable}: ${silent.map((probe) => `${probe.node} does not answer (${probe.failure})`).join(', ')}; going on with ${probes
        .filter((probe) => probe.mode !== undefined)
        .map((probe) => probe.node)
        .join(',')}`,
    );
  }
  return answered.mode!;
}

/**
 * Throws PORTER_REDIS_UNAVAILABLE when Redis does not answer, PORTER_REDIS_UNSUITABLE when it is
 * not what the configuration says, refuses scripts, or may evict keys (a warning instead when
 * `allowEviction`).
 */
export async function checkRedis(
  settings: RedisSettings,
  options: RedisCheckOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const mode = redisMode(settings);
  const found = await configuredMode(settings, timeoutMs, options.warn);
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
      const evicts = `${describeRedis(settings)} has maxmemory-policy ${policy}: when full it evicts keys, and porter's imports, jobs and results with them`;
      if (!options.allowEviction) {
        throw unsuitable(
          `${evicts}; set maxmemory-policy noeviction (or PORTER_ALLOW_EVICTION=true to start anyway)`,
        );
      }
      options.warn?.(`${evicts}; started anyway (PORTER_ALLOW_EVICTION=true)`);
    }
  } finally {
    redis.disconnect();
  }
}
