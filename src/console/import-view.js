/** Pieces shown for an import wherever it appears: state, progress, counts. */
import { h } from './dom.js';

export const FINAL_STATES = new Set(['completed', 'completed_with_errors', 'failed', 'cancelled']);

const STATE_TEXT = {
  receiving: 'receiving',
  queued: 'queued',
  running: 'running',
  paused: 'paused',
  held: 'held for approval',
  completed: 'completed',
  completed_with_errors: 'completed with errors',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function stateBadge(state) {
  return h('span', { class: `badge state-${state}` }, STATE_TEXT[state] ?? state);
}

/** A progress bar with its figures; without a total yet, an indeterminate bar. */
export function progressBar(info) {
  const total = info.total ?? 0;
  const done = info.done ?? 0;
  const percent = total > 0 ? Math.floor((100 * done) / total) : 0;
  const label = total > 0 ? `${done} of ${total} records (${percent}%)` : 'receiving the upload';
  const bar = h('progress', { max: String(Math.max(total, 1)), 'aria-label': label });
  if (total > 0) bar.value = done;
  else if (FINAL_STATES.has(info.state)) bar.value = 1;
  return h('div', { class: 'progress' }, bar, h('span', { class: 'progress-text' }, label));
}

const COUNT_ORDER = ['succeeded', 'planned', 'failed', 'skipped', 'unprocessed'];

/** "3 succeeded · 1 failed", the statuses that occurred. */
export function countsText(info) {
  const parts = COUNT_ORDER.filter((status) => (info.counts?.[status] ?? 0) > 0).map(
    (status) => `${info.counts[status]} ${status}`,
  );
  return parts.length > 0 ? parts.join(' · ') : '—';
}
