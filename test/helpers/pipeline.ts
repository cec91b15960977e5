/**
 * An in-process porter against real Redis and a real sandbox on port 0: the producer,
 * the workers and the store, with a fresh key prefix, all closed and removed by `close()`.
 */
import { Readable } from 'node:stream';
import { createPorterContext, type PorterContext } from '../../src/app/context.js';
import { startImport } from '../../src/app/imports.js';
import { startWorkers, type RunningWorkers, type WorkerSetOptions } from '../../src/app/workers.js';
import { loadEnv } from '../../src/config/env.js';
import type { InputFormat, Mapping } from '../../src/ingest/index.js';
import type { ImportInfo, ImportOptions, RecordResult } from '../../src/model/import.js';
import {
  startSandbox,
  type RunningSandbox,
  type SandboxOptions,
} from '../../src/sandbox/server.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';
import type { PorterMetrics } from '../../src/metrics/metrics.js';
import { deletePrefix, freshPrefix, testRedisUrl, waitFor } from './redis.js';

export interface Pipeline {
  sandbox: RunningSandbox;
  context: PorterContext;
  workers: RunningWorkers | undefined;
  /** Submits text as an upload and waits for the import to end. */
  run(
    text: string,
    options: Partial<ImportOptions> & Pick<ImportOptions, 'resource' | 'mode'>,
    extra?: { format?: InputFormat; mapping?: Mapping; fileName?: string },
  ): Promise<{ info: ImportInfo; results: RecordResult[] }>;
  /** Submits without waiting. */
  submit(
    text: string,
    options: Partial<ImportOptions> & Pick<ImportOptions, 'resource' | 'mode'>,
    extra?: { format?: InputFormat; mapping?: Mapping; fileName?: string },
  ): Promise<ImportInfo>;
  waitFinal(importId: string, timeoutMs?: number): Promise<ImportInfo>;
  results(importId: string): Promise<RecordResult[]>;
  startWorkers(options?: WorkerSetOptions): RunningWorkers;
  /** What a `porter` child process needs to join this pipeline: its Redis, prefix and sandbox. */
  childEnv(): Record<string, string>;
  close(): Promise<void>;
}

export interface PipelineOptions {
  sandbox?: SandboxOptions;
  /** Start in-process workers. @defaultValue true */
  workers?: boolean;
  workerOptions?: WorkerSetOptions;
  env?: Record<string, string>;
  /** A Redis other than the shared test Redis. */
  redisUrl?: string;
  /** Where the context reports admin calls, records and batches. */
  metrics?: PorterMetrics;
  /** Where the context logs. @defaultValue nowhere */
  logger?: Logger;
}

export async function startPipeline(options: PipelineOptions = {}): Promise<Pipeline> {
  const sandbox = await startSandbox({ port: 0, ...options.sandbox });
  const prefix = freshPrefix('pipeline');
  const env = loadEnv({
    REDIS_URL: options.redisUrl ?? testRedisUrl(),
    PORTER_PREFIX: prefix,
    ADMIN_BASE_URL: sandbox.url,
    PORTER_RETRY_BASE_MS: '20',
    PORTER_RETRY_MAX_MS: '200',
    ...options.env,
  });
  const context = await createPorterContext(env, {
    logger: options.logger ?? silentLogger,
    metrics: options.metrics,
  });
  const started: RunningWorkers[] = [];
  const launch = (workerOptions?: WorkerSetOptions): RunningWorkers => {
    const running = startWorkers(context, {
      concurrency: 4,
      ...options.workerOptions,
      ...workerOptions,
    });
    started.push(running);
    return running;
  };
  const workers = options.workers === false ? undefined : launch();

  const submit: Pipeline['submit'] = (text, importOptions, extra = {}) =>
    startImport(context, {
      options: {
        batchSize: 100,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: false,
        ...importOptions,
      },
      source: Readable.from([Buffer.from(text)]),
      fileName:
        extra.fileName ??
        (extra.format === 'json'
          ? 'upload.json'
          : extra.format === 'ndjson'
            ? 'upload.ndjson'
            : 'upload.csv'),
      format: extra.format,
      mapping: extra.mapping,
    });
  const waitFinal = (importId: string, timeoutMs = 60_000): Promise<ImportInfo> =>
    waitFor(
      async () => {
        const info = await context.store.get(importId);
        return info?.settled ? info : undefined;
      },
      { timeoutMs, what: `import ${importId} to end` },
    );
  const results = async (importId: string): Promise<RecordResult[]> => {
    const all: RecordResult[] = [];
    for await (const result of context.store.results(importId)) all.push(result);
    return all;
  };
  return {
    sandbox,
    context,
    workers,
    submit,
    waitFinal,
    results,
    startWorkers: launch,
    childEnv: () => ({
      REDIS_URL: context.env.REDIS_URL,
      PORTER_PREFIX: context.env.PORTER_PREFIX,
      ADMIN_BASE_URL: sandbox.url,
    }),
    async run(text, importOptions, extra) {
      const submitted = await submit(text, importOptions, extra);
      const info = await waitFinal(submitted.id);
      return { info, results: await results(submitted.id) };
    },
    async close() {
      await Promise.all(started.map((running) => running.close()));
      await context.importQueue.obliterate({ force: true }).catch(() => {});
      await context.close();
      await sandbox.close();
      await deletePrefix(options.redisUrl ?? testRedisUrl(), prefix);
    },
  };
}

/** CSV text from a header and rows (cells quoted when needed). */
export function csv(header: string[], rows: (string | number)[][]): string {
  const cell = (value: string | number): string => {
    const text = String(value);
    return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [header, ...rows].map((row) => row.map(cell).join(',')).join('\n') + '\n';
}
