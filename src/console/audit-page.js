/** The audit trail, newest first (admins): who did what, when, from where, and the result. */
import { api } from './api.js';
import { field, fill, h, notice, showTime, showValue, table } from './dom.js';

export async function auditPage(root, { signal }) {
  const who = h('input', { id: 'audit-who', name: 'who', type: 'search', autocomplete: 'off' });
  const since = h('input', { id: 'audit-since', name: 'since', value: '7d', autocomplete: 'off' });
  const list = h('div');
  const load = async () => {
    const query = new window.URLSearchParams({ limit: '500' });
    if (who.value.trim()) query.set('who', who.value.trim());
    if (since.value.trim()) query.set('since', since.value.trim());
    try {
      fill(list, render(await api(`/v1/audit?${query}`, { signal })));
    } catch (error) {
      fill(list, notice('error', error.message));
    }
  };
  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Audit')),
    h(
      'form',
      {
        class: 'card',
        onsubmit: (event) => {
          event.preventDefault();
          load();
        },
      },
      field('Who (name contains)', who),
      field('Since', since, 'a duration back from now (24h, 7d) or an ISO time'),
      h('button', { type: 'submit' }, 'Show'),
    ),
    list,
  );
  await load();
}

/** What the action came to; events written before outcomes were: a refusal was a 401 or 403. */
function outcomeOf(result) {
  if (result.outcome) return result.outcome;
  if (result.ok) return 'ok';
  return result.status === 401 || result.status === 403 ? 'refused' : 'failed';
}

/** ok, partial (with its counts), held for approval, failed or refused (with its code). */
function result(event) {
  if (!event.result) return 'intent';
  const outcome = outcomeOf(event.result);
  const exit = event.result.exitCode ? ` (exit ${event.result.exitCode})` : '';
  const code = event.result.code ? ` ${event.result.code}` : '';
  if (outcome === 'ok') return 'ok';
  if (outcome === 'partial') {
    const counts = Object.entries(event.what?.counts ?? {})
      .filter(([, count]) => count > 0)
      .map(([status, count]) => `${count} ${status}`)
      .join(', ');
    return `partial${counts ? `: ${counts}` : ''}${exit}`;
  }
  if (outcome === 'held') return `held for approval${exit}`;
  return `${outcome}${code}${exit}`;
}

function render(events) {
  if (events.length === 0) return h('p', null, 'No events.');
  return table(
    'Audit events, newest first',
    ['When', 'Who', 'Role', 'From', 'Action', 'Result', 'What'],
    events.map((event) => [
      showTime(event.at),
      event.who.display ? `${event.who.display} (${event.who.name})` : event.who.name,
      event.who.role ?? '—',
      event.from?.address ?? '—',
      event.action,
      result(event),
      Object.entries(event.what)
        .map(([key, value]) => `${key}: ${showValue(value)}`)
        .join('; '),
    ]),
    { class: 'audit' },
  );
}
