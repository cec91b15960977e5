/**
 * Runs an export whose state exists: marks it running, writes progress (throttled), then
 * records the outcome, completed with its files or failed with the reason, and applies the
 * schedule's retention after a success. Knows the store, not the queue.
 */
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { AdminClient } from '../admin/client.js';
import { AdminError } from '../admin/errors.js';
import type { RetryPolicy } from '../execute/retry-policy.js';
import type { ExportStore } from './export-store.js';
import { FINAL_EXPORT_STATES, type ExportCounts, type ExportInfo } from './export-types.js';
import { runExport } from './export-run.js';
import type { ExportManifest } from './manifest.js';
import { applyRetention } from './retention.js';
import { isTargetRefusal, type JobTargetRef } from '../targets/job-target.js';

/** What an export reads with: its target's client, and that target's shared 429 back-off. */
export interface ExportTarget {
  client: Pick<AdminClient, 'streamBatches' | 'streamDecoded' | 'get' | 'baseUrl'>;
  onRateLimited?: (retryAfterMs: number) => Promise<void> | void;
}

export interface ExecuteExportDeps {
  store: ExportStore;
  /**
   * The export's own target (src/targets/job-target.ts); throws the target's refusal (unknown
   * here, changed since the export was asked for), and then the export fails, reading nothing.
   */
  bindTarget: (ref: JobTargetRef) => ExportTarget;
  retry: RetryPolicy;
  logger: Logger;
  signal?: AbortSignal;
  /** Milliseconds between progress writes to Redis. @defaultValue 250 */
  progressIntervalMs?: number;
}

/** Runs the export; resolves with its final state, or `queued` again when `signal` aborted it. */
export async function executeExport(
  exportId: string,
  deps: ExecuteExportDeps,
): Promise<ExportInfo> {
  const { store, logger } = deps;
  const info = await store.require(exportId);
  if (FINAL_EXPORT_STATES.has(info.state)) return info;
  const log = logger.child({
    exportId,
    schedule: info.schedule?.name,
    target: info.request.target,
  });
  let target: ExportTarget;
  try {
    target = deps.bindTarget(info.request);
  } catch (error) {
    if (!isTargetRefusal(error)) throw error;
    await store.markRunning(exportId);
    await store.fail(exportId, `${error.message} [${error.code}]`);
    log.error({ code: error.code }, 'export refused by its target');
    return store.require(exportId);
  }
  await store.markRunning(exportId);
  log.info({ request: info.request, dir: info.dir }, 'export started');

  const intervalMs = deps.progressIntervalMs ?? 250;
  let lastWrite = 0;
  let writing: Promise<void> = Promise.resolve();
  const saveProgress = (written: number, counts: Readonly<ExportCounts>): void => {
    const snapshot = { ...counts };
    writing = writing
      .then(() => store.progress(exportId, written, snapshot))
      .catch((error: unknown) => log.warn({ err: error }, 'could not save export progress'));
  };

  let manifest: ExportManifest;
  try {
    manifest = await runExport(
      { id: exportId, request: info.request, dir: info.dir, schedule: info.schedule?.name },
      {
        client: target.client,
        retry: deps.retry,
        signal: deps.signal,
        onProgress: ({ written, counts }) => {
          const now = Date.now();
          if (now - lastWrite < intervalMs) return;
          lastWrite = now;
          saveProgress(written, counts);
        },
        onRetry: async (error, delayMs, step) => {
          log.warn({ err: error, delayMs, step }, 'export read failed; trying again');
          if (error instanceof AdminError && error.status === 429 && target.onRateLimited) {
            // a back-off that cannot be shared still leaves this read its own wait
            await Promise.resolve(target.onRateLimited(error.retryAfterMs ?? delayMs)).catch(
              (gateError: unknown) =>
                log.warn({ err: gateError }, 'could not share the 429 back-off'),
            );
          }
        },
      },
    );
  } catch (error) {
    await writing;
    if (deps.signal?.aborted) {
      // the worker is stopping: the run is not over, it starts again on another worker
      await store.requeue(exportId);
      log.warn({ reason: String(deps.signal.reason) }, 'export interrupted; queued again');
      return store.require(exportId);
    }
    const reason = error instanceof Error ? error.message : String(error);
    await store.fail(exportId, reason);
    log.error({ err: error }, 'export failed');
    return store.require(exportId);
  }
  // retention before the state says completed, so a completed run has had its retention
  const warnings = info.schedule ? await retain(info, exportId, store, log) : [];
  await writing;
  await store.complete(exportId, { ...manifest, warnings: [...manifest.warnings, ...warnings] });
  log.info({ counts: manifest.counts }, 'export completed');
  return store.require(exportId);
}

/** Applies the schedule's --keep after a successful run; returns warnings for the state. */
async function retain(
  info: ExportInfo,
  exportId: string,
  store: ExportStore,
  log: Logger,
): Promise<string[]> {
  const keep = info.schedule?.keep;
  if (!info.schedule || keep === undefined) return [];
  try {
    const result = await applyRetention({
      scheduleDir: dirname(info.dir),
      schedule: info.schedule.name,
      keep,
      currentId: exportId,
    });
    if (result.removed.length > 0) log.info({ removed: result.removed }, 'older runs removed');
    await store.markRemoved(result.removed);
    return result.keptForeign.map(
      (id) => `retention: run ${id} was removed, but its directory holds other files and stays`,
    );
  } catch (error) {
    log.warn({ err: error }, 'retention failed; older runs stay');
    return [`retention failed, older runs stay: ${(error as Error).message}`];
  }
}
