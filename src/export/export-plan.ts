/** Which files a request gives, in the order they are read, and the checks on a request. */
import { isAbsolute, join } from 'node:path';
import type { ResourceName } from '../admin/resources.js';
import { PorterError } from '../errors/porter-error.js';
import {
  EXPORT_FORMATS,
  EXPORT_RESOURCES,
  type ExportFile,
  type ExportFormat,
  type ExportRequest,
  type ExportResource,
} from './export-types.js';

/** Groups first (their names are needed for the others), then users, then ACLs. */
export const READ_ORDER: readonly ResourceName[] = ['groups', 'users', 'acls'];

export const BUNDLE_FILE = 'bundle.json';
export const MANIFEST_FILE = 'manifest.json';

/** One file to write: a resource in a format, or the bundle of all three. */
export interface PlannedFile {
  name: string;
  content: ExportFile['content'];
  format: ExportFile['format'];
}

/** Whether the request gives the one-document bundle. */
export function isBundle(request: Pick<ExportRequest, 'resource' | 'format'>): boolean {
  return request.format === 'bundle' || (request.resource === 'all' && request.format === 'json');
}

/** The resources a request reads, in read order. */
export function resourcesOf(resource: ExportResource): ResourceName[] {
  return READ_ORDER.filter((name) => resource === 'all' || resource === name);
}

/** The files of a run, in the order they are written. */
export function planFiles(request: Pick<ExportRequest, 'resource' | 'format'>): PlannedFile[] {
  if (isBundle(request)) return [{ name: BUNDLE_FILE, content: 'bundle', format: 'json' }];
  const format = request.format as ExportFile['format'];
  return resourcesOf(request.resource).map((resource) => ({
    name: `${resource}.${format}`,
    content: resource,
    format,
  }));
}

function usage(message: string): PorterError {
  return new PorterError('PORTER_USAGE', message);
}

/** Checks a request once, before it is queued; throws PORTER_USAGE naming the bad option. */
export function checkExportRequest(request: {
  resource?: unknown;
  format?: unknown;
  outDir?: unknown;
}): ExportRequest {
  const { resource, format, outDir } = request;
  if (!EXPORT_RESOURCES.includes(resource as ExportResource)) {
    throw usage(`Unknown resource "${String(resource)}"; use ${EXPORT_RESOURCES.join(', ')}.`);
  }
  if (!EXPORT_FORMATS.includes(format as ExportFormat)) {
    throw usage(`Unknown format "${String(format)}"; use ${EXPORT_FORMATS.join(', ')}.`);
  }
  if (format === 'bundle' && resource !== 'all') {
    throw usage('A bundle holds users, groups and ACLs together: use --resource all with it.');
  }
  if (typeof outDir !== 'string' || !isAbsolute(outDir)) {
    throw usage(`The output directory must be an absolute path, got ${String(outDir)}.`);
  }
  return { resource: resource as ExportResource, format: format as ExportFormat, outDir };
}

/** Where a run writes: `outDir/<id>`, or `outDir/<schedule>/<id>` for a scheduled run. */
export function runDirectory(outDir: string, exportId: string, schedule?: string): string {
  return schedule === undefined ? join(outDir, exportId) : join(outDir, schedule, exportId);
}
