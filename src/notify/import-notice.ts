/**
 * The event an import's end makes, from its state: finished (completed, with errors or not),
 * failed, target unreachable (failed before anything could be sent), or a sync held over its
 * deletion threshold. Cancelled imports make none: a person did it.
 */
import { SCIM_SOURCE, type ImportInfo } from '../model/import.js';
import { whyLines } from '../results/import-why.js';
import { DEFAULT_TARGET } from '../targets/targets.js';
import type { NotifyEventInput } from './notify-event.js';

function importCounts(info: ImportInfo): Record<string, number> {
  const counts: Record<string, number> = { total: Math.max(info.total, 0), ...info.counts };
  if (info.sync) {
    counts.locks = info.sync.locks;
    counts.deletes = info.sync.deletes;
    counts.threshold = info.sync.threshold;
  }
  return counts;
}

function what(info: ImportInfo): string {
  const kind = info.options.mode === 'sync' ? 'sync' : 'import';
  const dry = info.options.dryRun ? ' (dry run)' : '';
  return `${kind} ${info.id} of ${info.options.resource}${dry}`;
}

/** Who must act on a held sync, in words. */
export function approvalAction(info: ImportInfo, fourEyes: boolean): string {
  const who = fourEyes
    ? `An approver other than ${[info.startedBy, info.onBehalfOf].filter(Boolean).join(' and ') || 'its starter'}`
    : 'An approver';
  return `${who} must approve it (porter approve ${info.id}, or its page in the console) or cancel it; nothing of it is written until then.`;
}

/**
 * The event of an import that ended (or was held), or undefined when its end tells no one.
 * `firstRemovals`: the keys of a held sync's first locks and deletes.
 */
export function importNotice(
  info: ImportInfo,
  extra: { firstRemovals?: string[]; fourEyes?: boolean } = {},
): NotifyEventInput | undefined {
  const target = info.options.target ?? DEFAULT_TARGET;
  const base = {
    target,
    ids: { importId: info.id, ...(info.applyOf ? { applyOf: info.applyOf } : {}) },
    counts: importCounts(info),
    why: whyLines(info),
    ...(info.startedBy ? { startedBy: info.startedBy } : {}),
    ...(info.onBehalfOf ? { onBehalfOf: info.onBehalfOf } : {}),
    key: `${info.id}.${info.state}`,
    page: `imports/${encodeURIComponent(info.id)}`,
  };
  // what SCIM keeps as imports (src/app/scim-journal.ts: an hour's journal, a held plan) tells
  // no one when it ends: a held plan is told as scim.deletes_held, a journal is no one's work
  if (info.source === SCIM_SOURCE) return undefined;
  switch (info.state) {
    case 'held': {
      const { locks, deletes, threshold, inScope } = info.sync ?? {
        locks: 0,
        deletes: 0,
        threshold: 0,
        inScope: 0,
      };
      return {
        ...base,
        why: [
          `it would lock ${locks} and delete ${deletes} of the ${inScope} server records in scope; its threshold allows ${threshold} without approval`,
          ...base.why,
        ],
        name: 'sync.held',
        title: `Sync ${info.id} on ${target} is held: it would lock ${locks} and delete ${deletes}, over its threshold of ${threshold}`,
        keys: extra.firstRemovals,
        action: approvalAction(info, extra.fourEyes ?? true),
      };
    }
    case 'completed':
    case 'completed_with_errors': {
      // a held sync ends completed when approved: plan.approved told it, its application ends
      if (info.sync?.held === true && !info.options.dryRun) return undefined;
      const failed = info.counts.failed + info.counts.unprocessed;
      return {
        ...base,
        name: 'import.finished',
        title:
          failed > 0
            ? `${what(info)} on ${target} finished with ${failed} records failed`
            : `${what(info)} on ${target} finished: ${info.counts.succeeded + info.counts.planned} records`,
        ...(failed > 0
          ? {
              action:
                'The failed rows are in its report (its page in the console, or porter report).',
            }
          : {}),
      };
    }
    case 'failed':
      if (info.reasonCode === 'PORTER_TARGET_UNREACHABLE') {
        return {
          ...base,
          name: 'target.unreachable',
          title: `Target ${target} cannot be reached: ${what(info)} failed, nothing was sent`,
          action: `Check that ${target} answers, then retry it (porter retry ${info.id}).`,
        };
      }
      return {
        ...base,
        name: 'import.failed',
        title: `${what(info)} on ${target} failed${info.reason ? `: ${info.reason.slice(0, 160)}` : ''}`,
        action: 'The failed rows are in its report (its page in the console, or porter report).',
      };
    default:
      return undefined;
  }
}
