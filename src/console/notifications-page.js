/**
 * Notifications: the channels (no secret) with a test button each, and the deliveries, newest
 * first, with the log of each one's attempts and a button to send a delivered or failed one
 * again (same webhook-id).
 */
import { api, segment } from './api.js';
import { fill, h, notice, showTime, table } from './dom.js';

export async function notificationsPage(root, { signal }) {
  const status = h('div');
  const channels = h('div');
  const deliveries = h('div');
  const onlyFailed = h('input', { id: 'notify-failed', type: 'checkbox' });
  const loadDeliveries = async () => {
    try {
      const query = onlyFailed.checked ? '?failed=true' : '';
      fill(deliveries, renderDeliveries(await api(`/v1/notify/deliveries${query}`, { signal })));
    } catch (error) {
      fill(deliveries, notice('error', error.message));
    }
  };
  const act = async (path, done) => {
    fill(status);
    try {
      const answer = await api(path, { method: 'POST', signal });
      status.append(notice('info', done(answer)));
      await loadDeliveries();
    } catch (error) {
      status.append(notice('error', error.message));
    }
  };
  const renderChannels = (list) => {
    if (list.length === 0) {
      return h(
        'p',
        null,
        'No channels: PORTER_NOTIFY_FILE names none (see docs/notifications.md).',
      );
    }
    return table(
      'Channels',
      ['Name', 'Kind', 'Where', 'Events', 'Targets', ''],
      list.map((channel) => [
        channel.problem ? `${channel.name} (unusable: ${channel.problem})` : channel.name,
        channel.kind,
        channel.to ? `${channel.url} → ${channel.to.join(', ')}` : channel.url,
        channel.events === 'all' ? 'every event' : channel.events.join(', '),
        channel.targets === 'all' ? 'all' : channel.targets.join(', '),
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              act(
                `/v1/notify/channels/${segment(channel.name)}/test`,
                (answer) => `Test message to ${channel.name} queued: ${answer.id}.`,
              ),
          },
          `Send a test to ${channel.name}`,
        ),
      ]),
    );
  };
  const renderDeliveries = (list) => {
    if (list.length === 0) return h('p', null, 'No deliveries.');
    return table(
      'Deliveries, newest first',
      ['Queued', 'State', 'Attempts', 'Channel', 'Event', 'Delivery id', 'Last error', ''],
      list.map((delivery) => [
        showTime(delivery.createdAt),
        delivery.state,
        String(delivery.attempts),
        delivery.channel,
        `${delivery.event}: ${delivery.title}`,
        delivery.id,
        delivery.lastError ?? '—',
        delivery.state === 'delivered' || delivery.state === 'failed'
          ? h(
              'button',
              {
                type: 'button',
                onclick: () =>
                  act(
                    `/v1/notify/deliveries/${segment(delivery.id)}/redeliver`,
                    (answer) => `Delivery ${answer.id} queued again.`,
                  ),
              },
              `Redeliver ${delivery.id}`,
            )
          : '',
      ]),
      { class: 'notify' },
    );
  };
  onlyFailed.addEventListener('change', () => loadDeliveries());
  root.append(
    h('div', { class: 'page-head' }, h('h1', null, 'Notifications')),
    status,
    h('h2', null, 'Channels'),
    channels,
    h('h2', null, 'Deliveries'),
    h(
      'p',
      null,
      h('label', { for: 'notify-failed' }, onlyFailed, ' Only failed (given up or retrying)'),
      ' ',
      h('button', { type: 'button', onclick: () => loadDeliveries() }, 'Refresh'),
    ),
    deliveries,
  );
  try {
    fill(channels, renderChannels(await api('/v1/notify/channels', { signal })));
  } catch (error) {
    fill(channels, notice('error', error.message));
  }
  await loadDeliveries();
}
