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

function result(event) {
  if (!event.result) return 'intent';
  if (event.result.ok) return 'ok';
  return `refused ${event.result.code ?? event.result.status ?? ''}`;
}

function render(events) {
  if (events.length === 0) return h('p', null, 'No events.');
  return table(
    'Audit events, newest first',
    ['When', 'Who', 'Role', 'From', 'Action', 'Result', 'What'],
    events.map((event) => [
      showTime(event.at),
      event.who.name,
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
