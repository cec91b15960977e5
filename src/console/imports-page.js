/** The list of imports, newest first, refreshed while any of them runs. */
import { api } from './api.js';
import { fill, h, notice, poll, showTime, table } from './dom.js';
import { countsText, progressBar, stateBadge } from './import-view.js';
import { targetText } from './target-view.js';

export async function importsPage(root, { signal }) {
  const list = h('div', { 'aria-live': 'off' });
  const status = h('div');
  root.append(
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Imports'),
      h('a', { class: 'button', href: '#/imports/new' }, 'New import'),
    ),
    status,
    list,
  );
  let last = '';
  poll(
    async () => {
      const imports = await api('/v1/imports', { signal });
      fill(status);
      const text = JSON.stringify(imports);
      if (text !== last) {
        last = text;
        fill(list, render(imports));
      }
    },
    1500,
    signal,
    (error) => fill(status, notice('error', error.message)),
  );
}

function render(imports) {
  if (imports.length === 0) {
    return h('p', null, 'No imports yet. ', h('a', { href: '#/imports/new' }, 'Start one.'));
  }
  return table(
    'Imports, newest first',
    ['Import', 'Source', 'By', 'Target', 'Resource', 'State', 'Progress', 'Counts', 'Created'],
    imports.map((info) => [
      h('a', { class: 'id', href: `#/imports/${encodeURIComponent(info.id)}` }, info.id),
      info.source ?? '—',
      // who started it: a person, a token, the identity provider whose SCIM changes it holds
      info.startedBy ?? '—',
      targetText(info.options.target),
      `${info.options.resource} · ${info.options.mode}${info.options.dryRun ? ' · dry run' : ''}${storyText(info)}`,
      stateBadge(info.state),
      progressBar(info),
      countsText(info),
      showTime(info.createdAt),
    ]),
    { class: 'imports' },
  );
}

/** Where the import comes from and where its story went: " · undo of imp_…", " · written by imp_…". */
function storyText(info) {
  const parts = [];
  if (info.undoOf) parts.push(`undo of ${info.undoOf}`);
  else if (info.applyOf)
    parts.push(`${info.sync?.approvedFrom ? 'writes held' : 'applies'} ${info.applyOf}`);
  else if (info.retryOf) parts.push(`retry of ${info.retryOf}`);
  if (info.state === 'held') parts.push('held');
  if (info.writtenBy) parts.push(`approved, written by ${info.writtenBy}`);
  if (info.undoneBy) parts.push(`undone by ${info.undoneBy}`);
  return parts.map((part) => ` · ${part}`).join('');
}
