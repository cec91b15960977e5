/** Pieces shown for a migration wherever it appears: its state and its stage in progress. */
import { h } from './dom.js';

export const FINAL_MIGRATION_STATES = new Set(['completed', 'completed_with_errors', 'failed']);

export const STAGE_TEXT = {
  groups: 'Groups',
  acls: 'ACLs',
  users: 'Users',
  memberships: 'Memberships',
};

/** "users 41 of 100", the stage that runs now (or the last one), or an em dash. */
export function stageText(info) {
  const stage = info.stages?.find((item) => item.phase === 'running');
  if (stage) return `${STAGE_TEXT[stage.stage] ?? stage.stage} ${stage.done} of ${stage.total}`;
  if (FINAL_MIGRATION_STATES.has(info.state)) return 'ended';
  if (info.state === 'receiving') return info.from ? `reading ${info.from}` : 'reading the bundle';
  return info.stage ? (STAGE_TEXT[info.stage] ?? info.stage) : '—';
}

/** "create · dry run" */
export function optionsText(options = {}) {
  return [
    options.mode,
    options.dryRun ? 'dry run' : undefined,
    options.allowAdmin ? 'admins allowed' : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
}

/** "1 of 4 stages done" as a small line of text. */
export function stagesDone(info) {
  const done = (info.stages ?? []).filter((stage) => stage.phase === 'done').length;
  return h('span', { class: 'muted' }, `${done} of ${info.stages?.length ?? 4} stages done`);
}
