/**
 * Migrations: the recent ones, newest first, refreshed while any of them runs; and a form that
 * uploads a bundle (porter export --format bundle) to start one.
 */
import { api } from './api.js';
import { field, fill, h, notice, poll, select, showTime, table } from './dom.js';
import { stateBadge } from './import-view.js';
import { optionsText, stageText } from './migration-view.js';
import { errorNotice, loadTargets, targetPicker, targetText } from './target-view.js';

export async function migrationsPage(root, { signal }) {
  const list = h('div', { 'aria-live': 'off' });
  const status = h('div');
  const targets = await loadTargets(signal);
  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Migrations')),
    startForm(signal, targets),
    h('h2', null, 'Recent migrations'),
    status,
    list,
  );
  let last = '';
  poll(
    async () => {
      const migrations = await api('/v1/migrations', { signal });
      fill(status);
      const text = JSON.stringify(migrations);
      if (text !== last) {
        last = text;
        fill(list, render(migrations));
      }
    },
    1500,
    signal,
    (error) => fill(status, notice('error', error.message)),
  );
}

function startForm(signal, targets) {
  const fileInput = h('input', {
    type: 'file',
    id: 'bundle',
    name: 'bundle',
    accept: '.json,application/json',
    required: true,
  });
  const mode = select(
    'migration-mode',
    [
      ['upsert', 'upsert: create or update'],
      ['create', 'create: refuse what exists'],
    ],
    'upsert',
  );
  const dryRun = h('input', { type: 'checkbox', id: 'migration-dry-run', name: 'dryRun' });
  const allowAdmin = h('input', {
    type: 'checkbox',
    id: 'migration-allow-admin',
    name: 'allowAdmin',
  });
  const status = h('div', { class: 'form-status' });
  const submit = h('button', { type: 'submit' }, 'Start migration');
  // on a read-only target only a dry run may be started
  const target = targetPicker('migration-target', targets, {
    onChange: (chosen) => {
      if (chosen?.readOnly) dryRun.checked = true;
      dryRun.disabled = Boolean(chosen?.readOnly);
    },
  });
  return h(
    'form',
    {
      class: 'card',
      onsubmit: async (event) => {
        event.preventDefault();
        fill(status);
        const file = fileInput.files?.[0];
        if (!file) {
          status.append(notice('error', 'Choose a bundle file first.'));
          return;
        }
        let query = `mode=${encodeURIComponent(mode.value)}`;
        if (target.control.value) query += `&target=${encodeURIComponent(target.control.value)}`;
        if (dryRun.checked) query += '&dryRun=true';
        if (allowAdmin.checked) query += '&allowAdmin=true';
        submit.disabled = true;
        try {
          const info = await api(`/v1/migrations?${query}`, {
            method: 'POST',
            raw: file,
            contentType: 'application/json',
            signal,
          });
          location.hash = `#/migrations/${encodeURIComponent(info.id)}`;
        } catch (error) {
          if (!signal.aborted) status.append(errorNotice(error));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('h2', null, 'Start a migration'),
    h(
      'p',
      { class: 'muted' },
      'Upload a bundle (porter export --format bundle). Its groups, ACLs, users and memberships are written into the target chosen, stage by stage.',
    ),
    field('Bundle file (JSON)', fileInput),
    h(
      'div',
      { class: 'row' },
      target.element,
      field('Mode', mode),
      field('Dry run: plan only, write nothing', dryRun),
      field('Allow administrators', allowAdmin),
    ),
    submit,
    status,
  );
}

function render(migrations) {
  if (migrations.length === 0) return h('p', null, 'No migrations yet.');
  return table(
    'Migrations, newest first',
    ['Migration', 'Bundle', 'Target', 'Options', 'State', 'Stage', 'Created'],
    migrations.map((info) => [
      h('a', { href: `#/migrations/${encodeURIComponent(info.id)}` }, info.id),
      info.bundle?.name ?? info.bundle?.source ?? '—',
      targetText(info.options?.target),
      optionsText(info.options),
      stateBadge(info.state),
      stageText(info),
      showTime(info.createdAt),
    ]),
    { class: 'migrations' },
  );
}
