/**
 * Notifications over a porter context: the notifier (audit trail + delivery queue), the events
 * of imports that end (watched on the import events channel by every worker process), and what
 * the CLI, the HTTP API and the console ask of deliveries.
 */
import type { Redis } from 'ioredis';
import type { PorterContext } from './context.js';
import { securityOf } from './security.js';
import { Notifier, type DeliveryJob } from '../notify/notifier.js';
import type { NotifyEvent, NotifyEventInput } from '../notify/notify-event.js';
import { importNotice } from '../notify/import-notice.js';
import { tokenExpiringNotice } from '../notify/work-notices.js';
import { needsFourEyes } from '../auth/four-eyes.js';
import { REMOVAL_ACTIONS } from './plan-approval.js';
import { importEventsChannel } from '../results/import-keys.js';
import { parseImportEvent } from '../results/import-events.js';
import {
  describeDelivery,
  enqueueDelivery,
  listDeliveries,
  redeliver,
  type DeliveryInfo,
} from '../queue/notify-queue.js';
import { MAX_KEYS } from '../notify/notify-event.js';
import { PorterError } from '../errors/porter-error.js';

const made = new WeakMap<PorterContext, Notifier>();

/** The context's notifier, made once per context. */
export function notifierOf(context: PorterContext): Notifier {
  const known = made.get(context);
  if (known) return known;
  const { audit } = securityOf(context);
  const prefix = context.env.PORTER_PREFIX;
  const notifier = new Notifier({
    channels: context.channels,
    publicUrl: context.env.PORTER_PUBLIC_URL,
    logger: context.logger,
    enqueue: (job) => enqueueDelivery(context.notifyQueue, job),
    claim: async (eventId) =>
      (await context.redis.set(
        `${prefix}:notify:event:${eventId}`,
        '1',
        'EX',
        context.store.ttlSeconds,
        'NX',
      )) === 'OK',
    audit: async (event, deliveries) => {
      await audit.append({
        at: event.at,
        action: `notify.${event.name}`,
        phase: 'done',
        actionId: event.id,
        who: { name: 'porter:notify', via: 'notify' },
        what: {
          eventId: event.id,
          ...(event.target ? { target: event.target } : {}),
          ...event.ids,
          counts: event.counts,
          channels: deliveries.map((delivery) => delivery.channel),
          deliveries: deliveries.map((delivery) => delivery.id),
          ...(event.startedBy ? { startedBy: event.startedBy } : {}),
        },
        result: { ok: true, outcome: 'ok' },
      });
    },
  });
  made.set(context, notifier);
  return notifier;
}

/**
 * Emits an event by name to every channel that wants it, and writes it to the audit trail.
 * Never throws: a failing channel or queue cannot fail the work that made the event. This is
 * the one entry point for every producer of events (imports, exports, schedules, SCIM…).
 */
export function emitNotice(
  context: PorterContext,
  input: NotifyEventInput,
): Promise<NotifyEvent | undefined> {
  return notifierOf(context).emit(input);
}

/** Emits without waiting: for hooks on the path of an import, which never wait on a channel. */
export function emitInBackground(context: PorterContext, input: NotifyEventInput): void {
  void emitNotice(context, input).catch(() => {});
}

/** The keys of a held sync's first locks and deletes. */
async function firstRemovals(context: PorterContext, importId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const result of context.store.results(importId, { status: ['planned'] })) {
    if (result.action === undefined || !REMOVAL_ACTIONS.includes(result.action)) continue;
    keys.push(`${result.action} ${result.key ?? `row ${result.row}`}`);
    if (keys.length >= MAX_KEYS) break;
  }
  return keys;
}

/** Emits the event of an import that ended or was held, if its end tells anyone. */
export async function emitImportEnd(context: PorterContext, importId: string): Promise<void> {
  const info = await context.store.get(importId);
  if (!info) return;
  const held = info.state === 'held';
  const notice = importNotice(info, {
    ...(held ? { firstRemovals: await firstRemovals(context, importId) } : {}),
    fourEyes: needsFourEyes(context.targets, info),
  });
  if (notice) await emitNotice(context, notice);
}

/**
 * Watches the import events channel and emits the event of every import that settles (ended
 * or held). Every worker process watches; the event's id is the import's and its state, so two
 * watchers queue one delivery per channel. Returns its close().
 */
export async function watchImportEnds(context: PorterContext): Promise<() => Promise<void>> {
  if (!notifierOf(context).enabled) return async () => {};
  const subscriber: Redis = context.redis.duplicate();
  subscriber.on('error', () => {});
  const channel = importEventsChannel(context.env.PORTER_PREFIX);
  subscriber.on('message', (from: string, message: string) => {
    const event = from === channel ? parseImportEvent(message) : undefined;
    if (!event?.settled) return;
    emitImportEnd(context, event.id).catch((error: unknown) =>
      context.logger.warn({ err: error, importId: event.id }, 'could not tell of an import end'),
    );
  });
  await subscriber.subscribe(channel);
  return async () => {
    await subscriber.quit().catch(() => subscriber.disconnect());
  };
}

/** Deliveries, newest first (`failed`: given up or failing now). */
export function notifyDeliveries(
  context: PorterContext,
  options: { failed?: boolean; limit?: number } = {},
): Promise<DeliveryInfo[]> {
  return listDeliveries(context.notifyQueue, options);
}

/** One delivery and the log of its attempts. */
export function notifyDelivery(context: PorterContext, id: string) {
  return describeDelivery(context.notifyQueue, id);
}

/** Sends a delivered or failed delivery again, same id. */
export function redeliverNotification(context: PorterContext, id: string): Promise<DeliveryInfo> {
  return redeliver(context.notifyQueue, id);
}

/** Queues a test message to a channel. */
export function testChannel(
  context: PorterContext,
  channel: string,
  requestedBy: string,
): Promise<DeliveryJob> {
  return notifierOf(context).test(channel, requestedBy);
}

/** Writes to the audit trail that a delivery was given up. */
export function auditGiveUp(context: PorterContext, job: DeliveryJob, reason: string): void {
  void securityOf(context)
    .audit.append({
      at: new Date().toISOString(),
      action: 'notify.failed',
      phase: 'done',
      actionId: job.id,
      who: { name: 'porter:notify', via: 'notify' },
      what: {
        delivery: job.id,
        event: job.event.name,
        eventId: job.event.id,
        channel: job.channel,
      },
      result: { ok: false, outcome: 'failed', code: 'PORTER_NOTIFY_FAILED', message: reason },
    })
    .catch((error: unknown) =>
      context.logger.warn({ err: error }, 'could not audit a failed delivery'),
    );
}

/**
 * Waits for a delivery's first outcome: delivered, or an attempt failed (PORTER_NOTIFY_FAILED
 * with the reason). Undefined when no worker took it within `timeoutMs` (it stays queued).
 */
export async function waitForDelivery(
  context: PorterContext,
  id: string,
  timeoutMs: number,
): Promise<DeliveryInfo | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await listOne(context, id);
    if (info?.state === 'delivered') return info;
    if (info && (info.state === 'failed' || info.lastError !== undefined)) {
      throw new PorterError(
        'PORTER_NOTIFY_FAILED',
        `delivery ${id} to channel ${info.channel} failed: ${info.lastError ?? 'no answer'}${info.state === 'retrying' ? '; it is retried' : ''}`,
        { details: { delivery: id, channel: info.channel } },
      );
    }
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function listOne(context: PorterContext, id: string): Promise<DeliveryInfo | undefined> {
  try {
    return await describeDelivery(context.notifyQueue, id);
  } catch (error) {
    if (error instanceof PorterError && error.code === 'PORTER_NOT_FOUND') return undefined;
    throw error;
  }
}

/** Tokens expiring within this are told of (`token.expiring`), once per token and expiry. */
export const TOKEN_WARNING_MS = 7 * 24 * 3_600_000;
/** How often the workers look for expiring tokens. */
export const TOKEN_CHECK_INTERVAL_MS = 3_600_000;

/** Emits `token.expiring` for every token that expires within TOKEN_WARNING_MS. */
export async function emitExpiringTokens(context: PorterContext, now = new Date()): Promise<void> {
  const tokens = await securityOf(context).tokens.list();
  for (const token of tokens) {
    if (token.expiresAt === undefined) continue;
    const left = Date.parse(token.expiresAt) - now.getTime();
    if (left <= 0 || left > TOKEN_WARNING_MS) continue;
    await emitNotice(context, tokenExpiringNotice({ ...token, expiresAt: token.expiresAt }, now));
  }
}

/** Checks for expiring tokens now and every TOKEN_CHECK_INTERVAL_MS; returns its stop(). */
export function watchExpiringTokens(context: PorterContext): () => void {
  if (!notifierOf(context).enabled) return () => {};
  const check = (): void => {
    emitExpiringTokens(context).catch((error: unknown) =>
      context.logger.warn({ err: error }, 'could not check for expiring tokens'),
    );
  };
  check();
  const timer = setInterval(check, TOKEN_CHECK_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
