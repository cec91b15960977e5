/**
 * What the fault benches share: a sandbox with latency, seen through a proxy that counts how
 * often each user was sent; porter's context (the producer) on the Redis under test; `porter
 * worker` processes; one users import; and the figures of a run.
 */
import { Readable } from 'node:stream';
import { createPorterContext, type PorterContext } from '../src/app/context.js';
import { startImport } from '../src/app/imports.js';
import { loadEnv } from '../src/config/env.js';
import type { ImportInfo } from '../src/model/import.js';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.js';
import { silentLogger } from '../src/util/logger.js';
import { forward, startProxy, type TestProxy } from '../test/helpers/proxy.js';
import { spawnWorker, type WorkerProcess } from '../test/helpers/worker-process.js';

export const TAKEOVER_LINE = 'taking over a batch';

/** How a process finds Redis: REDIS_URL, or REDIS_SENTINELS and REDIS_SENTINEL_NAME. */
export type RedisEnv = Record<string, string>;

export interface RigOptions {
  redis: RedisEnv;
  latencyMs: number;
  /** The sandbox's other faults: refusals with 503 and answers dropped after applying. */
  failRate?: number;
  dropRate?: number;
  /** Extra environment of the producer and the workers. */
  env?: Record<string, string>;
}

export interface Rig {
  sandbox: RunningSandbox;
  context: PorterContext;
  /** Starts a `porter worker` (concurrency 4); `redis` replaces the rig's Redis for it. */
  worker(redis?: RedisEnv): WorkerProcess;
  /** Waits until this many workers listen on the import queue. */
  waitWorkers(count: number): Promise<void>;
  /** Submits an import creating `total` users, `batchSize` a call; resolves with its id. */
  /** `stream`: batches go while the upload is read (docs/streaming.md). */
  submitUsers(total: number, label: string, batchSize: number, stream?: boolean): Promise<string>;
  /** The import as Redis has it now; undefined while Redis does not answer. */
  read(importId: string): Promise<ImportInfo | undefined>;
  /** Waits until a share of the import's records have a result. */
  waitDone(importId: string, share: number): Promise<void>;
  /** Waits until the import is settled, reading through outages; undefined after the timeout. */
  waitSettled(importId: string, timeoutMs: number): Promise<ImportInfo | undefined>;
  /** Most times one user was sent in a write call. */
  maxSends(): number;
  close(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startRig(options: RigOptions): Promise<Rig> {
  const sandbox = await startSandbox({
    port: 0,
    faults: {
      latencyMs: options.latencyMs,
      failRate: options.failRate ?? 0,
      dropRate: options.dropRate ?? 0,
    },
  });
  const sends = new Map<string, number>();
  const target = new URL(sandbox.url);
  const proxy: TestProxy = await startProxy((incoming, outgoing) => {
    if (incoming.method !== 'GET') {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        for (const match of body.matchAll(/"username":"((?:[^"\\]|\\.)*)"/g)) {
          sends.set(match[1]!, (sends.get(match[1]!) ?? 0) + 1);
        }
      });
    }
    forward(target, incoming, outgoing);
  });
  // the producer (this process) and the workers on one prefix, whatever the caller's
  // environment says: the workers inherit it, the producer's context does not read it
  const env = { ADMIN_BASE_URL: proxy.url, PORTER_PREFIX: 'porter', ...options.env };
  const context = await createPorterContext(loadEnv({ ...options.redis, ...env }), {
    logger: silentLogger,
  });
  const workers: WorkerProcess[] = [];
  const read = async (importId: string): Promise<ImportInfo | undefined> => {
    try {
      return await context.store.get(importId);
    } catch {
      return undefined;
    }
  };
  return {
    sandbox,
    context,
    worker: (redis = options.redis) => {
      const worker = spawnWorker({ ...redis, ...env }, ['--concurrency', '4']);
      workers.push(worker);
      return worker;
    },
    waitWorkers: async (count) => {
      while ((await context.importQueue.getWorkersCount()) < count) await sleep(50);
    },
    submitUsers: async (total, label, batchSize, stream) => {
      const rows = Array.from({ length: total }, (_, index) => `${label}.${index},T${index}`);
      const submitted = await startImport(context, {
        options: {
          resource: 'users',
          mode: 'create',
          batchSize,
          listSeparator: '|',
          emptyAsClear: false,
          allowAdmin: false,
          ...(stream === true ? { stream: true } : {}),
        },
        source: Readable.from([Buffer.from(`username,lastName\n${rows.join('\n')}\n`)]),
        fileName: 'users.csv',
      });
      return submitted.id;
    },
    read,
    waitDone: async (importId, share) => {
      for (;;) {
        const info = await read(importId);
        if (info && info.done >= info.total * share && info.total > 0) return;
        await sleep(20);
      }
    },
    waitSettled: async (importId, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const info = await read(importId);
        if (info?.settled) return info;
        await sleep(50);
      }
      return undefined;
    },
    maxSends: () => {
      let most = 0;
      for (const count of sends.values()) most = Math.max(most, count);
      return most;
    },
    close: async () => {
      for (const worker of workers) {
        if (worker.child.exitCode === null && worker.child.signalCode === null) {
          worker.child.kill('SIGKILL');
          await worker.exited;
        }
      }
      await context.close();
      proxy.close();
      await sandbox.close();
    },
  };
}

/** The first line of any of these workers holding `text` at or after `since`: its time. */
export function firstLineAfter(
  workers: readonly WorkerProcess[],
  text: string,
  since: number,
): number | undefined {
  const times = workers.flatMap((worker) =>
    worker
      .lines()
      .filter((line) => line.at >= since && line.text.includes(text))
      .map((line) => line.at),
  );
  return times.length > 0 ? Math.min(...times) : undefined;
}
