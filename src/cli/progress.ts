/** Shows an import's progress while it runs: a live bar on a terminal, plain lines otherwise. */
import { RECORD_ACTIONS, type ImportInfo, type LookupInfo } from '../model/import.js';
import { describeLinks, importKind, plansOnly } from '../model/import-story.js';
import { whyLines } from '../results/import-why.js';
import { isConnectionError } from '../redis/outage-log.js';
import { follow, type FollowDisplay } from './follow.js';
import { describeSync } from './sync.js';

export interface ProgressOptions extends FollowDisplay {
  /** Reads the import's current state. */
  read: () => Promise<ImportInfo | undefined>;
}

/** Waits until the import is settled (final, every record with its result), showing progress. */
export async function followImport(options: ProgressOptions): Promise<ImportInfo> {
  const started = Date.now();
  // a Redis away now is said by follow(); the rate then counts from nothing
  const firstDone =
    (
      await options.read().catch((error: unknown) => {
        if (isConnectionError(error)) return undefined;
        throw error;
      })
    )?.done ?? 0;
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
  const totalText = info.receivedAt === undefined ? '?' : String(total);
  return `${bar} ${done}/${totalText} records  ${rate.toFixed(0)}/s  ETA ${eta}  ${info.state}`;
}

/** The closing summary of an import. */
export function summarize(info: ImportInfo): string {
  const { succeeded, failed, skipped, unprocessed, planned } = info.counts;
  const reason = info.reason ? ` (${info.reason})` : '';
  const done = plansOnly(info) ? `${planned} planned` : `${succeeded} succeeded`;
  return (
    `${importKind(info)} ${info.id} ${info.state}${reason}: ${info.total} records, ` +
    `${done}, ${failed} failed, ${skipped} skipped, ${unprocessed} unprocessed`
  );
}

/** Records per action: planned ones for a plan (a dry run, a held sync), done ones otherwise. */
export function describeActions(info: ImportInfo): string {
  const parts = RECORD_ACTIONS.filter((action) => info.actions[action]).map(
    (action) => `${info.actions[action]} ${action}`,
  );
  if (parts.length === 0) return '';
  const hint = info.options.dryRun && info.settled ? ` (apply with: porter apply ${info.id})` : '';
  if (!plansOnly(info)) return `done: ${parts.join(', ')}${hint}`;
  // a held sync's plan is written by another import, or by none
  const written = info.options.dryRun
    ? ''
    : info.writtenBy
      ? ` (written by import ${info.writtenBy})`
      : info.state === 'held'
        ? ''
        : ' (nothing written)';
  return `planned: ${parts.join(', ')}${hint}${written}`;
}

/**
 * The lines a command ends with once an import is settled: the summary, what was done or
 * planned, a sync's plan, where the import's story goes on, and why records did not succeed
 * (last, so the last line says it).
 */
export function closingLines(info: ImportInfo): string[] {
  return [
    summarize(info),
    describeActions(info),
    info.sync ? describeSync(info) : '',
    ...describeLinks(info),
    ...whyLines(info),
  ].filter((line) => line !== '');
}

/** How the import looked records up, in one line. */
export function describeLookup(lookup: LookupInfo): string {
  const size =
    lookup.mode === 'snapshot' && lookup.records !== undefined
      ? `: ${lookup.records} on the server at ${lookup.takenAt}, ${lookup.kept} of them named by the upload`
      : '';
  const shared =
    lookup.sharedBy === undefined ? '' : `; one read for ${lookup.sharedBy} imports of this target`;
  return `lookup: ${lookup.mode} (${lookup.why})${size}${shared}`;
}

/** Which target a job is for: its name, and where it pointed when submitted. */
export function describeTarget(ref: { target?: string; targetUrl?: string }): string {
  const url = ref.targetUrl === undefined ? '' : ` (${ref.targetUrl})`;
  return `target: ${ref.target ?? 'default'}${url}`;
}
