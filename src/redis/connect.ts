/**
 * Every Redis connection porter makes, built from the environment in one place: a single node
 * (REDIS_URL), a Cluster (REDIS_CLUSTER_NODES) or a Sentinel set (REDIS_SENTINELS), each with
 * TLS and an ACL user when set.
 *
 * A Cluster client is handed out under ioredis' `Redis` type: it speaks the same commands, and
 * porter sends only commands, scripts and transactions whose keys share one hash slot (see
 * src/redis/key-tags.ts), which is what a Cluster client needs of them.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Env } from '../config/env.js';
import { endSubscriptionsWithClient } from './sentinel-subscriptions.js';
import { redactUrl } from '../util/redact-url.js';

export type RedisMode = 'single' | 'cluster' | 'sentinel';

/** The part of the environment that says where Redis is. */
export type RedisSettings = Pick<Env, 'REDIS_URL'> &
  Partial<
    Pick<
      Env,
      | 'REDIS_CLUSTER_NODES'
      | 'REDIS_SENTINELS'
      | 'REDIS_SENTINEL_NAME'
      | 'REDIS_USERNAME'
      | 'REDIS_PASSWORD'
      | 'REDIS_SENTINEL_USERNAME'
      | 'REDIS_SENTINEL_PASSWORD'
      | 'REDIS_TLS'
    >
  >;

/** What a connection is for. */
export type ConnectionPurpose =
  /** porter's own commands: results, state, staging; commands of one tick share a write. */
  | 'commands'
  /** The connection BullMQ builds its own from: it waits for Redis without limit. */
  | 'queue'
  /** One check at start-up: no retry, a short timeout. */
  | 'probe';

export function redisMode(settings: RedisSettings): RedisMode {
  if (settings.REDIS_CLUSTER_NODES) return 'cluster';
  if (settings.REDIS_SENTINELS) return 'sentinel';
  return 'single';
}

/** Where Redis is, for messages and logs: hosts and ports, never a password. */
export function describeRedis(settings: RedisSettings): string {
  const list = (nodes: readonly { host: string; port: number }[]): string =>
    nodes.map((node) => `${node.host}:${node.port}`).join(',');
  switch (redisMode(settings)) {
    case 'cluster':
      return `the Redis Cluster at ${list(settings.REDIS_CLUSTER_NODES!)}`;
    case 'sentinel':
      return `the master "${settings.REDIS_SENTINEL_NAME}" of the Sentinels at ${list(settings.REDIS_SENTINELS!)}`;
    default:
      return `the Redis at ${redactUrl(settings.REDIS_URL)}`;
  }
}

function purposeOptions(purpose: ConnectionPurpose, timeoutMs: number): RedisOptions {
  switch (purpose) {
    case 'commands':
      return { maxRetriesPerRequest: 20, enableAutoPipelining: true };
    case 'queue':
      return { maxRetriesPerRequest: null };
    case 'probe':
      return {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: timeoutMs,
        enableOfflineQueue: false,
      };
  }
}

function authOptions(settings: RedisSettings): RedisOptions {
  const options: RedisOptions = {};
  if (settings.REDIS_USERNAME) options.username = settings.REDIS_USERNAME;
  if (settings.REDIS_PASSWORD) options.password = settings.REDIS_PASSWORD;
  if (settings.REDIS_TLS) options.tls = {};
  return options;
}

export interface ConnectionOptions {
  /** Connect timeout of a probe. @defaultValue 3000 */
  timeoutMs?: number;
}

/**
 * A new connection to the configured Redis. Clusters and Sentinel sets are followed through
 * failovers and slot moves by the client.
 */
export function createRedisConnection(
  settings: RedisSettings,
  purpose: ConnectionPurpose,
  options: ConnectionOptions = {},
): Redis {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const base = { ...authOptions(settings), ...purposeOptions(purpose, timeoutMs) };
  const mode = redisMode(settings);
  if (mode === 'cluster') {
    const {
      enableAutoPipelining,
      lazyConnect,
      retryStrategy,
      enableOfflineQueue,
      ...redisOptions
    } = base;
    // No auto-pipelining on a Cluster: it puts commands of several slots of one node in one
    // pipeline, and a pipeline is neither sent at all once a slot of it moves ("All keys in the
    // pipeline should belong to the same slots allocation group") nor sent again after an ASK,
    // MOVED or TRYAGAIN unless its other commands only read. Alone, each command follows its
    // own redirections; commands still leave without waiting for each other's answers.
    void enableAutoPipelining;
    const clusterOptions: ClusterOptions = {
      redisOptions,
      enableAutoPipelining: false,
      // a slot in migration answers TRYAGAIN to a command whose keys are split between the two
      // nodes (or do not exist yet) until its last key has moved: wait it out, about a minute,
      // before the command fails (a batch then waits and runs again, src/redis/wait-out.ts)
      retryDelayOnTryAgain: CLUSTER_TRYAGAIN_DELAY_MS,
      maxRedirections: CLUSTER_MAX_REDIRECTIONS,
      lazyConnect: lazyConnect ?? false,
      ...(purpose === 'probe' ? { clusterRetryStrategy: () => null } : {}),
      ...(enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
    };
    void retryStrategy;
    // see the file's comment: porter's keys of one command always share a slot
    return new Cluster(settings.REDIS_CLUSTER_NODES!, clusterOptions) as unknown as Redis;
  }
  if (mode === 'sentinel') {
    const client = new Redis({
      ...base,
      sentinels: settings.REDIS_SENTINELS!,
      name: settings.REDIS_SENTINEL_NAME!,
      ...(settings.REDIS_SENTINEL_USERNAME
        ? { sentinelUsername: settings.REDIS_SENTINEL_USERNAME }
        : {}),
      ...(settings.REDIS_SENTINEL_PASSWORD
        ? { sentinelPassword: settings.REDIS_SENTINEL_PASSWORD }
        : {}),
      ...(settings.REDIS_TLS ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      ...(purpose === 'probe'
        ? { sentinelRetryStrategy: () => null }
        : {
            // follow a failover at once (the Sentinels announce +switch-master), and should a
            // command still reach the old master, now a replica, reconnect and send it again
            failoverDetector: true,
            reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
          }),
    });
    return endSubscriptionsWithClient(client);
  }
  // a user or password in the URL wins over the variables; ioredis reads the URL's own
  const url = new URL(settings.REDIS_URL);
  const { username, password, tls, ...rest } = base;
  return new Redis(settings.REDIS_URL, {
    ...rest,
    ...(url.username || !username ? {} : { username }),
    ...(url.password || !password ? {} : { password }),
    ...(tls && url.protocol !== 'rediss:' ? { tls } : {}),
  });
}

/** Whether the connection is a Cluster client. */
export function isCluster(redis: Redis): boolean {
  return (redis as unknown as { isCluster?: boolean }).isCluster === true;
}

/** How long a Cluster command waits before it is sent again after TRYAGAIN. */
const CLUSTER_TRYAGAIN_DELAY_MS = 200;
/** Redirections (MOVED, ASK, TRYAGAIN) a Cluster command follows before it fails: about a minute. */
const CLUSTER_MAX_REDIRECTIONS = 300;

/** The single-node settings of a URL: what tests and `porter dev` start from. */
export function singleRedis(url: string): RedisSettings {
  return { REDIS_URL: url };
}
