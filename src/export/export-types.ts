/** The vocabulary of an export: what is dumped, in which format, where, and what came of it. */
import type { ResourceName } from '../admin/resources.js';

/** One resource, or all three. */
export type ExportResource = ResourceName | 'all';
export const EXPORT_RESOURCES: readonly ExportResource[] = ['users', 'groups', 'acls', 'all'];

/** `bundle`: users, groups and ACLs in one JSON document (also what `all` with `json` gives). */
export type ExportFormat = 'csv' | 'json' | 'ndjson' | 'bundle';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'json', 'ndjson', 'bundle'];

export type ExportState = 'queued' | 'running' | 'completed' | 'failed';
export const FINAL_EXPORT_STATES: ReadonlySet<ExportState> = new Set(['completed', 'failed']);

/** What to export and where; travels with the export job. */
export interface ExportRequest {
  /** The target read, and its fingerprint when the export was asked for (see ImportOptions). */
  target?: string;
  targetFingerprint?: string;
  /** Where the target pointed then, credentials left out. */
  targetUrl?: string;
  resource: ExportResource;
  format: ExportFormat;
  /** Absolute directory the run directory is made in (for a schedule: its parent). */
  outDir: string;
}

/** The schedule a run belongs to. */
export interface ExportScheduleRef {
  name: string;
  /** Completed runs of the schedule kept; older ones are removed after a successful run. */
  keep?: number;
}

/** One file of a finished run, as listed in its manifest. */
export interface ExportFile {
  name: string;
  /** The resource it holds, or `bundle` for the one-document format. */
  content: ResourceName | 'bundle';
  format: 'csv' | 'json' | 'ndjson';
  records: number;
  bytes: number;
  sha256: string;
}

/** Records written so far, per resource. */
export type ExportCounts = Partial<Record<ResourceName, number>>;

/** What porter keeps about an export, readable while it runs. */
export interface ExportInfo {
  id: string;
  state: ExportState;
  /** Why it failed. */
  reason?: string;
  request: ExportRequest;
  schedule?: ExportScheduleRef;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Directory of this run's files. */
  dir: string;
  /** Records written so far, all resources together. */
  written: number;
  counts: ExportCounts;
  /** The run's files; filled when it completes. */
  files: ExportFile[];
  warnings: string[];
  /** When the schedule's retention (--keep) removed the run's files; they cannot be downloaded. */
  removedAt?: string;
}

/** Records in the batches they were read in: an export pays per batch, not per record. */
export type RecordBatches = AsyncIterable<readonly Readonly<Record<string, unknown>>[]>;
