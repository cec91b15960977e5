/**
 * One migration: its state and, for each stage (groups, ACLs, users, memberships), its phase,
 * progress and counts, with a link to the stage's import. Refreshed until it has ended.
 */
import { api, download, segment } from './api.js';
import { factList, fill, h, notice, poll, showTime, table } from './dom.js';
import { countsText, progressBar, stateBadge } from './import-view.js';
import { FINAL_MIGRATION_STATES, optionsText, STAGE_TEXT, stageText } from './migration-view.js';
import { targetText } from './target-view.js';

const ACTION_ORDER = ['create', 'update', 'delete', 'unchanged'];

export async function migrationPage(root, { signal }, migrationId) {
  const summary = h('div', { class: 'summary' });
  const stages = h('section', { 'aria-labelledby': 'stages-title' });
  const status = h('div');
  const idMapButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () =>
        download(
          `/v1/migrations/${segment(migrationId)}/id-map.csv`,
          `${migrationId}-id-map.csv`,
        ).catch((error) => fill(status, notice('error', error.message))),
    },
    'Download id map (CSV)',
  );
  root.append(
    h('p', null, h('a', { href: '#/migrations' }, 'All migrations')),
    h('h1', null, `Migration ${migrationId}`),
    h('div', { class: 'actions' }, idMapButton),
    status,
    summary,
    stages,
  );
  let last = '';
  poll(
    async () => {
      const info = await api(`/v1/migrations/${segment(migrationId)}`, { signal });
      fill(status);
      const text = JSON.stringify({ ...info, updatedAt: undefined });
      if (text !== last) {
        last = text;
        renderSummary(info);
        renderStages(info);
      }
      return !(FINAL_MIGRATION_STATES.has(info.state) && info.stages.every(isSettled));
    },
    1000,
    signal,
    (error) => fill(status, notice('error', error.message)),
  );

  function renderSummary(info) {
    const bundle = info.bundle ?? {};
    const facts = [
      ['State', stateBadge(info.state)],
      ['Reason', info.reason],
      ['Stage', stageText(info)],
      ['Target', targetText(info.options?.target, info.options?.targetUrl, true)],
      ['Options', optionsText(info.options)],
      ['Bundle', bundle.name],
      ['Exported from', bundle.source],
      ['Exported', bundle.exportedAt ? showTime(bundle.exportedAt) : undefined],
      [
        'Records',
        info.totals
          ? `${info.totals.groups} groups · ${info.totals.acls} ACLs · ${info.totals.users} users`
          : undefined,
      ],
      ['Created', showTime(info.createdAt)],
      ['Finished', info.finishedAt ? showTime(info.finishedAt) : undefined],
    ];
    fill(summary, factList(facts));
  }

  function renderStages(info) {
    fill(
      stages,
      h('h2', { id: 'stages-title' }, 'Stages'),
      table(
        'Stages, in the order they run',
        ['Stage', 'Phase', 'Progress', 'Counts', 'Actions', 'Import'],
        info.stages.map((stage) => ({
          props: { 'data-stage': stage.stage },
          cells: [
            STAGE_TEXT[stage.stage] ?? stage.stage,
            h('span', { class: `badge phase-${stage.phase}` }, stage.phase),
            stageProgress(stage),
            countsText(stage),
            actionsText(stage.actions),
            stage.importId
              ? h(
                  'a',
                  {
                    href: `#/imports/${segment(stage.importId)}`,
                    'aria-label': `${STAGE_TEXT[stage.stage] ?? stage.stage} import ${stage.importId}`,
                  },
                  stage.importId,
                )
              : '—',
          ],
        })),
      ),
    );
  }
}

/** The stage's progress bar; a stage without records says so rather than show an empty bar. */
function stageProgress(stage) {
  if (stage.total > 0) return progressBar(stage);
  if (stage.phase === 'done') return 'no records';
  return stage.phase === 'running' ? 'starting' : 'waiting';
}

/** A stage is settled when it is done, or never started in a migration that ended. */
function isSettled(stage) {
  return stage.phase === 'done' || stage.importId === undefined;
}

function actionsText(actions) {
  const parts = ACTION_ORDER.filter((action) => (actions?.[action] ?? 0) > 0).map(
    (action) => `${actions[action]} ${action}`,
  );
  return parts.length > 0 ? parts.join(' · ') : '—';
}
