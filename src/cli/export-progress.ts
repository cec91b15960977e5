/** Shows an export's progress while it runs (records written so far) and its outcome. */
import type { ExportInfo } from '../export/export-types.js';
import { follow, type FollowDisplay } from './follow.js';

export interface ExportProgressOptions extends FollowDisplay {
  /** Reads the export's current state. */
  read: () => Promise<ExportInfo | undefined>;
}

/** One line: records written, per resource, rate and state. */
export function describeExportProgress(info: ExportInfo, startedAt: number): string {
  const seconds = Math.max(0.001, (Date.now() - startedAt) / 1000);
  const parts = Object.entries(info.counts).map(([resource, count]) => `${resource} ${count}`);
  const detail = parts.length > 0 ? ` (${parts.join(', ')})` : '';
  return `${info.written} records written${detail}  ${(info.written / seconds).toFixed(0)}/s  ${info.state}`;
}

/** Waits until the export completed or failed, showing progress. */
export async function followExport(options: ExportProgressOptions): Promise<ExportInfo> {
  const started = Date.now();
  return follow({
    ...options,
    what: 'export',
    isFinal: (info) => info.state === 'completed' || info.state === 'failed',
    // still queued after a while: perhaps no worker runs
    mark: (info) => (info.state === 'queued' ? 'queued' : {}),
    describe: (info) => describeExportProgress(info, started),
  });
}

/** The closing lines: where the files are, or why it failed. */
export function summarizeExport(info: ExportInfo): string {
  if (info.state !== 'completed') {
    return `export ${info.id} ${info.state}${info.reason ? `: ${info.reason}` : ''}`;
  }
  const lines = [`export ${info.id} completed: ${info.written} records in ${info.dir}`];
  for (const file of info.files) {
    lines.push(
      `  ${file.name}  ${file.records} records, ${file.bytes} bytes, sha256 ${file.sha256}`,
    );
  }
  lines.push(`  manifest.json`);
  for (const warning of info.warnings) lines.push(`warning: ${warning}`);
  return lines.join('\n');
}
