/**
 * How a process tells of a Redis outage: one warn line when Redis goes away, one when it is
 * back, whatever number of connections, queues and workers see it fail meanwhile. Errors that
 * are not about the connection are logged as they come.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../util/logger.js';

/** Codes and messages of errors that mean "Redis is not reachable now", not a fault of porter. */
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
  /Connection is closed|connect E|ClusterAllFailedError|Failed to refresh slots cache|None of startup nodes|All sentinels are unreachable|MaxRetriesPerRequest|Stream isn't writeable|READONLY|LOADING|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|Reached the max retries/;

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
  const failed = (source: object, error: unknown): void => {
    if (isConnectionError(error)) {
      lost.add(source);
      update();
    } else {
      logger.warn({ err: error }, 'Redis error');
    }
  };
  return {
    add(connection) {
      connection.on('error', (error: unknown) => failed(connection, error));
      connection.on('node error', (error: unknown) => failed(connection, error));
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

/**
 * The listener of a BullMQ queue's or worker's `error` event: an unreachable Redis is told once
 * by the process's own connections (watchRedis), so here it goes to debug; anything else is
 * logged at `level`.
 */
export function queueErrorListener(
  logger: Logger,
  what: string,
  level: 'warn' | 'error' = 'error',
): (error: Error) => void {
  const lockLost = new Set<string>();
  return (error) => {
    if (isConnectionError(error)) {
      logger.debug({ err: error }, `${what}: Redis unreachable`);
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
