/** Export and schedule use cases shared by the CLI and the HTTP API. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { PorterError } from '../errors/porter-error.js';
import { newExportId } from '../export/export-id.js';
import {
  checkExportRequest,
  MANIFEST_FILE,
  planFiles,
  runDirectory,
} from '../export/export-plan.js';
import {
  FINAL_EXPORT_STATES,
  type ExportFormat,
  type ExportInfo,
  type ExportRequest,
  type ExportResource,
} from '../export/export-types.js';
import { bindTarget } from '../targets/job-target.js';
import { enqueueExport } from '../queue/export-queue.js';
import { recordFailedExportJob } from '../queue/export-worker.js';
import {
  getSchedule,
  listSchedules as listSchedulers,
  removeSchedule,
  upsertSchedule,
  type ScheduleInfo,
} from '../queue/schedules.js';
import type { PorterContext } from './context.js';

/** What a caller asks for; checked before anything is queued. */
export interface ExportSubmission {
  resource: ExportResource;
  format: ExportFormat;
  /** Absolute directory the run directory is made in (see cliOutDir, apiOutDir). */
  outDir: string;
  /** The target read. @defaultValue `default` */
  target?: string;
}

export interface ScheduleSubmission extends ExportSubmission {
  name: string;
  cron: string;
  tz?: string;
  keep?: number;
}

function ttlSeconds(context: PorterContext): number {
  return Math.round(context.env.PORTER_RESULT_TTL_DAYS * 24 * 3600);
}

/** The CLI's output directory: --out, else PORTER_EXPORT_DIR, made absolute from here. */
export function cliOutDir(context: PorterContext, out?: string): string {
  return resolve(out ?? context.env.PORTER_EXPORT_DIR);
}

/**
 * The API's output directory: PORTER_EXPORT_DIR, or a relative subdirectory of it. A client
 * never names a place outside it (no absolute paths, no `..`).
 */
export function apiOutDir(context: PorterContext, out?: string): string {
  const base = resolve(context.env.PORTER_EXPORT_DIR);
  if (out === undefined || out === '') return base;
  const dir = resolve(base, out);
  if (isAbsolute(out) || out.split(/[\\/]/).includes('..') || !dir.startsWith(base + sep)) {
    throw new PorterError(
      'PORTER_USAGE',
      `out: ${JSON.stringify(out)} must be a relative subdirectory of the export directory`,
    );
  }
  return dir;
}

/** The export request checked, bound to its target (known here; its fingerprint recorded). */
function exportRequestOf(context: PorterContext, submission: ExportSubmission): ExportRequest {
  const { ref } = bindTarget(context.targets, { target: submission.target }, { writes: false });
  return { ...ref, ...checkExportRequest(submission) };
}

/** Checks and queues an ad-hoc export; resolves with its state (`queued`). */
export async function startExport(
  context: PorterContext,
  submission: ExportSubmission,
): Promise<ExportInfo> {
  const request = exportRequestOf(context, submission);
  const id = newExportId();
  const info = await context.exportStore.create({
    id,
    request,
    dir: runDirectory(request.outDir, id),
  });
  await enqueueExport(context.exportQueue, id, request);
  return info;
}

/**
 * The export, or PORTER_NOT_FOUND. An ad-hoc export still `queued` or `running` whose job has
 * failed (BullMQ fails a job whose workers died on it too often, without running it again) is
 * marked failed with the job's reason here too, so a caller waiting for it never waits forever.
 */
export async function requireExport(context: PorterContext, exportId: string): Promise<ExportInfo> {
  const info = await context.exportStore.require(exportId);
  if (FINAL_EXPORT_STATES.has(info.state) || info.schedule) return info;
  const job = await context.exportQueue.getJob(exportId);
  if (!job || !(await job.isFailed())) return info;
  // files are left to the workers: this process may not see the run's directory
  await recordFailedExportJob(context.exportStore, job, job.failedReason || 'no reason given', {
    removeFiles: false,
  });
  return context.exportStore.require(exportId);
}

/** Recent exports, newest first. */
export function listExports(context: PorterContext, limit = 100): Promise<ExportInfo[]> {
  return context.exportStore.list(limit);
}

/** Whether any worker listens on the export queue (for a hint when nothing moves). */
export async function exportWorkersRunning(context: PorterContext): Promise<boolean> {
  return (await context.exportQueue.getWorkers()).length > 0;
}

export interface ExportFileDownload {
  name: string;
  bytes: number;
  contentType: string;
  stream: Readable;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
};

/**
 * Opens one file of a completed export for download. Only names its manifest lists (and the
 * manifest) are served, so no name can reach outside the run directory.
 */
export async function openExportFile(
  context: PorterContext,
  exportId: string,
  name: string,
): Promise<ExportFileDownload> {
  const info = await requireExport(context, exportId);
  // a completed run serves what its manifest lists; a running one, what it will list
  const names =
    info.state === 'completed'
      ? info.files.map((file) => file.name)
      : planFiles(info.request).map((file) => file.name);
  if (name !== MANIFEST_FILE && !names.includes(name)) {
    throw new PorterError(
      'PORTER_NOT_FOUND',
      `export ${exportId} has no file ${JSON.stringify(name)}`,
    );
  }
  if (info.state !== 'completed') {
    throw new PorterError(
      'PORTER_CONFLICT',
      `export ${exportId} is ${info.state}; its files are not ready`,
    );
  }
  const path = join(info.dir, name);
  if (dirname(path) !== info.dir) {
    throw new PorterError(
      'PORTER_NOT_FOUND',
      `export ${exportId} has no file ${JSON.stringify(name)}`,
    );
  }
  let bytes: number;
  try {
    bytes = (await stat(path)).size;
  } catch {
    throw new PorterError(
      'PORTER_NOT_FOUND',
      `${name} of export ${exportId} is gone from ${info.dir} (removed by retention or by hand)`,
    );
  }
  const extension = name.slice(name.lastIndexOf('.') + 1);
  return {
    name,
    bytes,
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    stream: createReadStream(path),
  };
}

/** Creates or replaces a schedule (checked up front: name, cron pattern, time zone, keep). */
export async function addSchedule(
  context: PorterContext,
  submission: ScheduleSubmission,
): Promise<ScheduleInfo> {
  const { name, cron, tz, keep, ...request } = submission;
  const info = await upsertSchedule(
    context.exportQueue,
    { name, cron, tz, keep, request: exportRequestOf(context, request) },
    ttlSeconds(context),
  );
  // one schedule per name: an import schedule of this name is replaced
  await context.importScheduleQueue.removeJobScheduler(name);
  return info;
}

/** Every schedule, soonest first. */
export function listSchedules(context: PorterContext): Promise<ScheduleInfo[]> {
  return listSchedulers(context.exportQueue);
}

/** The schedule, or PORTER_NOT_FOUND. */
export async function requireSchedule(context: PorterContext, name: string): Promise<ScheduleInfo> {
  const info = await getSchedule(context.exportQueue, name);
  if (!info) throw new PorterError('PORTER_NOT_FOUND', `no schedule named ${JSON.stringify(name)}`);
  return info;
}

/** Removes a schedule; its past runs and their files stay. */
export async function deleteSchedule(context: PorterContext, name: string): Promise<void> {
  if (!(await removeSchedule(context.exportQueue, name))) {
    throw new PorterError('PORTER_NOT_FOUND', `no schedule named ${JSON.stringify(name)}`);
  }
}
