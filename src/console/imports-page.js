/**
 * The list of imports, newest first, refreshed while any of them runs; `#/imports?target=NAME`
 * and `&source=scim` (a target's row on the Targets page links them) keep one target's, one
 * source's.
 */
import { api } from './api.js';
import { fill, h, notice, poll, showTime, table } from './dom.js';
import { countsText, progressBar, stateBadge } from './import-view.js';
import { targetText } from './target-view.js';

/** The filters the list takes, as the API's query. */
const FILTERS = ['source', 'target'];

export async function importsPage(root, { signal }, query = new URLSearchParams()) {
  const filters = new URLSearchParams();
  for (const name of FILTERS) if (query.get(name)) filters.set(name, query.get(name));
  const list = h('div', { 'aria-live': 'off' });
  const status = h('div');
  root.append(
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, 'Imports'),
      h('a', { class: 'button', href: '#/imports/new' }, 'New import'),
    ),
    filters.size > 0 ? filterNote(filters) : undefined,
    status,
    list,
  );
  let last = '';
  const path = filters.size > 0 ? `/v1/imports?${filters}` : '/v1/imports';
  poll(
    async () => {
      const imports = await api(path, { signal });
      fill(status);
      const text = JSON.stringify(imports);
      if (text !== last) {
        last = text;
        fill(list, render(imports, filters.size > 0));
      }
    },
    1500,
    signal,
    (error) => fill(status, notice('error', error.message)),
  );
}

/** "Only the imports of target second from source scim · All imports". */
function filterNote(filters) {
  const parts = [];
  if (filters.get('target')) parts.push(`of target ${filters.get('target')}`);
  if (filters.get('source')) parts.push(`from source ${filters.get('source')}`);
  return h(
    'p',
    { class: 'muted filter-note' },
    `Only the imports ${parts.join(' ')} · `,
    h('a', { href: '#/imports' }, 'All imports'),
  );
}

function render(imports, filtered) {
  if (imports.length === 0) {
    if (filtered) return h('p', null, 'None.');
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
