/** Shows an import's progress while it runs: a live bar on a terminal, plain lines otherwise. */
import { RECORD_ACTIONS, type ImportInfo, type LookupInfo } from '../model/import.js';
import { follow, type FollowDisplay } from './follow.js';

export interface ProgressOptions extends FollowDisplay {
  /** Reads the import's current state. */
  read: () => Promise<ImportInfo | undefined>;
}

/** Waits until the import is settled (final, every record with its result), showing progress. */
export async function followImport(options: ProgressOptions): Promise<ImportInfo> {
  const started = Date.now();
  const firstDone = (await options.read())?.done ?? 0;
  return follow({
    ...options,
    what: 'import',
    isFinal: (info) => info.settled,
    mark: (info) => info.done,
    describe: (info) => describeProgress(info, started, firstDone),
  });
}

/** One line: bar, records done of total, rate and ETA. */
export function describeProgress(info: ImportInfo, startedAt: number, doneAtStart = 0): string {
  const total = info.total;
  const done = info.done;
  const fraction = total > 0 ? Math.min(1, done / total) : 0;
  const width = 24;
  const filled = Math.round(fraction * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const seconds = Math.max(0.001, (Date.now() - startedAt) / 1000);
  const rate = (done - doneAtStart) / seconds;
  const eta = rate > 0 && total > done ? `${Math.ceil((total - done) / rate)}s` : '-';
  const totalText = info.state === 'receiving' ? '?' : String(total);
  return `${bar} ${done}/${totalText} records  ${rate.toFixed(0)}/s  ETA ${eta}  ${info.state}`;
}

/** The closing summary of an import. */
export function summarize(info: ImportInfo): string {
  const { succeeded, failed, skipped, unprocessed, planned } = info.counts;
  const reason = info.reason ? ` (${info.reason})` : '';
  const what = info.options.dryRun ? 'dry run' : info.options.mode === 'sync' ? 'sync' : 'import';
  // a held sync planned only, as a dry run does
  const plans = info.options.dryRun || info.state === 'held';
  const done = plans ? `${planned} planned` : `${succeeded} succeeded`;
  return (
    `${what} ${info.id} ${info.state}${reason}: ${info.total} records, ` +
    `${done}, ${failed} failed, ${skipped} skipped, ${unprocessed} unprocessed`
  );
}

/** Records per action: planned ones for a dry run, done ones for an import; empty when none. */
export function describeActions(info: ImportInfo): string {
  const parts = RECORD_ACTIONS.filter((action) => info.actions[action]).map(
    (action) => `${info.actions[action]} ${action}`,
  );
  if (parts.length === 0) return '';
  const hint = info.options.dryRun && info.settled ? ` (apply with: porter apply ${info.id})` : '';
  const plans = info.options.dryRun || info.state === 'held';
  return `${plans ? 'planned' : 'done'}: ${parts.join(', ')}${hint}`;
}

/** How the import looked records up, in one line. */
export function describeLookup(lookup: LookupInfo): string {
  const size =
    lookup.mode === 'snapshot' && lookup.records !== undefined
      ? `: ${lookup.records} on the server at ${lookup.takenAt}, ${lookup.kept} named by the upload`
      : '';
  return `lookup: ${lookup.mode} (${lookup.why})${size}`;
}

/** Which target a job is for: its name, and where it pointed when submitted. */
export function describeTarget(ref: { target?: string; targetUrl?: string }): string {
  const url = ref.targetUrl === undefined ? '' : ` (${ref.targetUrl})`;
  return `target: ${ref.target ?? 'default'}${url}`;
}
