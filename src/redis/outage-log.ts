/**
 * How a process tells of a Redis outage: one warn line when Redis goes away, one when it is
 * back, whatever number of connections, queues and workers see it fail meanwhile. Errors that
 * are not about the connection are logged as they come.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../util/logger.js';
import { isCluster } from './connect.js';
import { isOutOfMemory, type RoomWatch } from './redis-full.js';

/**
 * Codes and messages of errors that mean "Redis cannot serve this now", not a fault of porter:
 * it is not reachable, or a Cluster slot is moving (a reshard: MOVED, ASK and TRYAGAIN past the
 * client's redirections, a pipeline whose slots stopped sharing a node) or fails over.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
const CONNECTION_MESSAGES =
  /Connection is closed|connect E|ClusterAllFailedError|Failed to refresh slots cache|None of startup nodes|All sentinels are unreachable|MaxRetriesPerRequest|Stream isn't writeable|READONLY|LOADING|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|Reached the max retries|Too many Cluster redirections|slots allocation group|^(MOVED|ASK) \d+ |Cluster isn't ready|Cluster is disconnected/;

export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code && CONNECTION_CODES.has(code)) return true;
  if (CONNECTION_MESSAGES.test(error.message)) return true;
  const last = (error as { lastNodeError?: unknown }).lastNodeError;
  return last !== undefined && last !== error && isConnectionError(last);
}

export interface RedisWatch {
  /** Follows a connection: its errors, losses and returns. */
  add(connection: Redis): void;
  /** Whether Redis is away now. */
  readonly down: boolean;
  /** Called with true when Redis goes away and false when it is back; returns the unsubscriber. */
  onChange(listener: (down: boolean) => void): () => void;
}

export function watchRedis(logger: Logger, where: string): RedisWatch {
  const lost = new Set<object>();
  const listeners = new Set<(down: boolean) => void>();
  let down = false;
  let since = 0;
  const update = (): void => {
    const now = lost.size > 0;
    if (now === down) return;
    down = now;
    if (down) {
      since = Date.now();
      logger.warn(`Redis went away (${where}); waiting for it`);
    } else {
      logger.warn({ awayMs: Date.now() - since }, `Redis is back (${where})`);
    }
    for (const listener of listeners) listener(down);
  };
  const failed = (source: Redis, error: unknown): void => {
    if (isConnectionError(error)) {
      lost.add(source);
      update();
      if (isCluster(source)) awaitCluster(source);
    } else {
      logger.warn({ err: error }, 'Redis error');
    }
  };
  // A Cluster client stays `ready` while one of its nodes is lost (a master killed, its replica
  // promoted): it never says `ready` again, so it is back once it is ready and every master it
  // routes to is connected, checked until then
  const checking = new Set<Redis>();
  const awaitCluster = (cluster: Redis): void => {
    if (checking.has(cluster)) return;
    checking.add(cluster);
    const check = async (): Promise<void> => {
      if (!lost.has(cluster) || cluster.status === 'end') {
        checking.delete(cluster);
        return;
      }
      if (await clusterServes(cluster)) {
        checking.delete(cluster);
        lost.delete(cluster);
        update();
        return;
      }
      setTimeout(() => void check(), CLUSTER_CHECK_MS).unref();
    };
    setTimeout(() => void check(), CLUSTER_CHECK_MS).unref();
  };
  const checkSoon = (cluster: Redis): void => {
    setTimeout(() => {
      if (cluster.status !== 'ready') return;
      void clusterServes(cluster).then((serves) => {
        if (serves || cluster.status !== 'ready') return;
        lost.add(cluster);
        update();
        awaitCluster(cluster);
      });
    }, CLUSTER_CHECK_MS).unref();
  };
  return {
    add(connection) {
      connection.on('error', (error: unknown) => failed(connection, error));
      // a node of a Cluster that is still starting is one seed among others: the client tries
      // the next, and says `error` when none answers. Once ready, a node's lost connection, or a
      // node the client dropped, is an outage only if, a moment later, some slot has no master
      // that answers: a dead seed node, a node that serves no slot, or a pool the client is
      // still sorting into masters and replicas is none
      connection.on('node error', (error: unknown) => {
        if (connection.status !== 'ready') return;
        if (!isCluster(connection) || !isConnectionError(error)) failed(connection, error);
        else checkSoon(connection);
      });
      connection.on('-node', () => {
        if (isCluster(connection) && connection.status === 'ready') checkSoon(connection);
      });
      connection.on('reconnecting', () => {
        lost.add(connection);
        update();
      });
      connection.on('ready', () => {
        lost.delete(connection);
        update();
      });
    },
    get down() {
      return down;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** How often a Cluster that lost a node is checked for being whole again. */
const CLUSTER_CHECK_MS = 500;

/** What the watch reads of a Cluster client beyond ioredis' `Redis` type. */
interface ClusterView {
  status: string;
  /** The node keys (`host:port`, master first) serving each slot, as the client last learned. */
  slots: (string[] | undefined)[];
  nodes(role: 'master'): Redis[];
  /** Asks a node for the slot map again (ioredis does so on MOVED and on a lost connection). */
  refreshSlotsCache?(callback?: (error?: Error) => void): void;
}

/**
 * Whether a Cluster client is ready and every slot has a master that answers (a connection
 * not yet used is asked a PING); when not, it asks for the slot map again, to learn of a
 * replica promoted meanwhile.
 */
async function clusterServes(connection: Redis): Promise<boolean> {
  const cluster = connection as unknown as ClusterView;
  if (cluster.status !== 'ready') return false;
  const masters = new Map(
    cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]),
  );
  const needed = new Set<string>();
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    const master = cluster.slots[slot]?.[0];
    if (master === undefined) return refreshed(cluster);
    needed.add(master);
  }
  for (const key of needed) {
    const node = masters.get(key);
    if (!node || !(node.status === 'ready' || (await answers(node)))) return refreshed(cluster);
  }
  return true;
}

/** Asks a Cluster client for its slot map again; false, for the caller to return. */
function refreshed(cluster: ClusterView): false {
  cluster.refreshSlotsCache?.(() => {});
  return false;
}

/** Whether a node answers PING within a second. */
async function answers(node: Redis): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), 1_000);
  });
  try {
    return await Promise.race([
      node.ping().then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The hash slots of a Redis Cluster. */
const CLUSTER_SLOTS = 16_384;

/**
 * The listener of a BullMQ queue's or worker's `error` event: an unreachable Redis is told once
 * by the process's own connections (watchRedis), and a full Redis once by `room`, so here they
 * go to debug; anything else is logged at `level`.
 */
export function queueErrorListener(
  logger: Logger,
  what: string,
  level: 'warn' | 'error' = 'error',
  room?: RoomWatch,
): (error: Error) => void {
  const lockLost = new Set<string>();
  return (error) => {
    if (isConnectionError(error)) {
      logger.debug({ err: error }, `${what}: Redis unreachable`);
      return;
    }
    if (isOutOfMemory(error)) {
      room?.refused(error);
      logger.debug({ reason: error.message }, `${what}: Redis is full`);
      return;
    }
    const lost = lockLostJob(error);
    if (lost === undefined) {
      logger[level]({ err: error }, `${what} error`);
      return;
    }
    // a lock that Redis forgot (a restart, a rolled-back AOF, a failover) or that another
    // worker took over: expected, and the batch's work is then another worker's. A failed
    // renewal is told by the worker's lockRenewalFailed listener; a refused end once per job
    // here, without a stack
    if (lost.kind === 'renew' || lockLost.has(lost.job)) {
      logger.debug({ job: lost.job, reason: error.message }, `${what}: lock lost`);
      return;
    }
    if (lockLost.size >= LOCKS_REMEMBERED) lockLost.delete(lockLost.values().next().value!);
    lockLost.add(lost.job);
    logger.warn(
      { job: lost.job, reason: error.message },
      `${what}: lost the lock of job ${lost.job}`,
    );
  };
}

/** Job ids whose lost lock a listener has told, at most. */
const LOCKS_REMEMBERED = 1000;

/**
 * The job of a BullMQ error about a lock it no longer holds: a renewal Redis refused, or the end
 * of a job Redis refused (its lock is missing or another's); undefined for any other error.
 */
export function lockLostJob(error: Error): { job: string; kind: 'renew' | 'finish' } | undefined {
  const match = /(could not renew lock|missing lock|lock mismatch) for job ([^\s.]+)/i.exec(
    error.message,
  );
  if (!match) return undefined;
  return {
    job: match[2]!,
    kind: match[1]!.toLowerCase() === 'could not renew lock' ? 'renew' : 'finish',
  };
}
