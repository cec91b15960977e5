/** `porter notify`: channels, test messages, deliveries and redeliveries (docs/notifications.md). */
import type { Command } from 'commander';
import {
  notifyDeliveries,
  notifyDelivery,
  redeliverNotification,
  testChannel,
  waitForDelivery,
} from '../../app/notify.js';
import { currentPrincipal } from '../../auth/acting.js';
import type { ChannelSummary } from '../../notify/channels.js';
import type { DeliveryInfo } from '../../queue/notify-queue.js';
import { positiveInteger } from '../options.js';
import { withContext } from '../with-context.js';

/** One line per channel: name, kind, where, what it is told of. */
export function describeChannel(channel: ChannelSummary): string {
  const events = channel.events === 'all' ? 'every event' : channel.events.join(',');
  const targets = channel.targets === 'all' ? '' : `  targets ${channel.targets.join(',')}`;
  const to = channel.to ? `  to ${channel.to.join(', ')}` : '';
  const problem = channel.problem ? `  UNUSABLE: ${channel.problem}` : '';
  return `${channel.name.padEnd(12)} ${channel.kind.padEnd(7)} ${channel.url}${to}  ${events}${targets}${problem}`;
}

/** One line per delivery: when, state, attempts, channel, event, id, last error. */
export function describeDelivery(delivery: DeliveryInfo): string {
  const error = delivery.lastError ? `  last error: ${delivery.lastError}` : '';
  return `${delivery.createdAt}  ${delivery.state.padEnd(9)} ${String(delivery.attempts).padStart(2)} tries  ${delivery.channel}  ${delivery.event}  ${delivery.id}${error}`;
}

export function registerNotifyCommand(program: Command): void {
  const notify = program
    .command('notify')
    .description('Notification channels (PORTER_NOTIFY_FILE) and their deliveries');
  notify
    .command('channels')
    .description('List the channels; no secret is shown')
    .option('--json', 'print them as JSON')
    .action(async (options: { json?: boolean }) => {
      await withContext(async (context) => {
        const list = context.channels.list().map((channel) => channel.summary);
        if (options.json) console.log(JSON.stringify(list, null, 2));
        else if (list.length === 0) console.log('no channels (PORTER_NOTIFY_FILE is not set)');
        else for (const channel of list) console.log(describeChannel(channel));
      });
    });
  notify
    .command('test')
    .description(
      'Send a test message to a channel through the delivery queue, and wait for its first attempt (a worker sends it); exit 69 when it failed',
    )
    .argument('<channel>', 'the channel name')
    .option('--no-wait', 'queue it and return')
    .option('--json', 'print the delivery as JSON')
    .action(async (channel: string, options: { wait: boolean; json?: boolean }) => {
      await withContext(async (context) => {
        const who = currentPrincipal()?.name ?? 'cli';
        const job = await testChannel(context, channel, who);
        if (!options.wait) {
          console.log(
            options.json ? JSON.stringify({ id: job.id, state: 'waiting' }) : `queued ${job.id}`,
          );
          return;
        }
        const done = await waitForDelivery(
          context,
          job.id,
          context.env.PORTER_NOTIFY_TIMEOUT_MS + 10_000,
        );
        if (options.json) console.log(JSON.stringify(done ?? { id: job.id, state: 'waiting' }));
        else if (done) console.log(`delivered ${job.id} to ${channel}`);
        else console.log(`queued ${job.id}: no worker has sent it yet (is porter worker running?)`);
      });
    });
  notify
    .command('deliveries')
    .description('List deliveries, newest first: delivered, waiting, retrying, failed')
    .option('--failed', 'only those given up or failing now (retrying)')
    .option('--limit <n>', 'at most this many', positiveInteger('--limit'), 100)
    .option('--json', 'print them as JSON, as GET /v1/notify/deliveries answers')
    .action(async (options: { failed?: boolean; limit: number; json?: boolean }) => {
      await withContext(async (context) => {
        const list = await notifyDeliveries(context, options);
        if (options.json) console.log(JSON.stringify(list, null, 2));
        else for (const delivery of list) console.log(describeDelivery(delivery));
      });
    });
  notify
    .command('show')
    .description('One delivery and the log of its attempts')
    .argument('<id>', 'the delivery id')
    .option('--json', 'print it as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      await withContext(async (context) => {
        const delivery = await notifyDelivery(context, id);
        if (options.json) console.log(JSON.stringify(delivery, null, 2));
        else {
          console.log(describeDelivery(delivery));
          for (const line of delivery.log) console.log(`  ${line}`);
        }
      });
    });
  notify
    .command('redeliver')
    .description('Send a delivered or failed delivery again, with the same webhook-id')
    .argument('<id>', 'the delivery id')
    .action(async (id: string) => {
      await withContext(async (context) => {
        const delivery = await redeliverNotification(context, id);
        console.log(`queued again: ${delivery.id} (${delivery.channel}, ${delivery.event})`);
      });
    });
}
