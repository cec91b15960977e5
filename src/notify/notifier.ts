/**
 * Emitting an event: it is written to the audit trail naming the channels it goes to, and one
 * delivery per channel is queued. Queuing is idempotent by delivery id (the event's id and the
 * channel), so an event seen by two processes is delivered once per channel. Emitting never
 * throws and never waits for a receiver: a failing channel cannot slow or fail the work that
 * made the event.
 */
import type { Logger } from 'pino';
import type { ChannelSet } from './channels.js';
import { completeEvent, type NotifyEvent, type NotifyEventInput } from './notify-event.js';

/** One event to one channel: the job of the delivery queue. */
export interface DeliveryJob {
  /** `<event id>.<channel>`: the webhook's `webhook-id`, the same on every attempt. */
  id: string;
  channel: string;
  event: NotifyEvent;
}

export interface NotifierDeps {
  channels: ChannelSet;
  /** PORTER_PUBLIC_URL: where the console's links point. */
  publicUrl?: string;
  /** Queues a delivery; a delivery of the same id already queued is left as it is. */
  enqueue(job: DeliveryJob): Promise<void>;
  /** True the first time an event id is claimed: only that emitter writes its audit event. */
  claim(eventId: string): Promise<boolean>;
  audit(event: NotifyEvent, deliveries: DeliveryJob[]): Promise<void>;
  logger: Pick<Logger, 'warn' | 'info'>;
}

/** The delivery id of an event to a channel. */
export function deliveryId(eventId: string, channel: string): string {
  return `${eventId}.${channel}`;
}

export class Notifier {
  constructor(private readonly deps: NotifierDeps) {}

  /** Whether any channel is configured: without one, emitting does nothing. */
  get enabled(): boolean {
    return this.deps.channels.list().length > 0;
  }

  /**
   * Emits an event to every channel that wants it. Returns the event, or undefined when no
   * channel is configured or it could not be queued (logged, never thrown).
   */
  async emit(input: NotifyEventInput): Promise<NotifyEvent | undefined> {
    if (!this.enabled) return undefined;
    const event = completeEvent(input, this.deps.publicUrl);
    try {
      const jobs = this.deps.channels.wanting(event).map((channel) => ({
        id: deliveryId(event.id, channel.name),
        channel: channel.name,
        event,
      }));
      for (const job of jobs) await this.deps.enqueue(job);
      if (await this.deps.claim(event.id)) await this.deps.audit(event, jobs);
      return event;
    } catch (error) {
      this.deps.logger.warn(
        { err: error, event: event.name, eventId: event.id },
        'could not queue a notification',
      );
      return undefined;
    }
  }

  /** Sends a test message to one channel (PORTER_NOT_FOUND for an unknown one). */
  async test(channelName: string, requestedBy: string): Promise<DeliveryJob> {
    const channel = this.deps.channels.require(channelName);
    const event = completeEvent(
      {
        name: 'notify.test',
        title: `Test message to channel ${channel.name} from porter`,
        ids: {},
        counts: {},
        why: [],
        startedBy: requestedBy,
      },
      this.deps.publicUrl,
    );
    const job = { id: deliveryId(event.id, channel.name), channel: channel.name, event };
    await this.deps.enqueue(job);
    await this.deps.audit(event, [job]);
    return job;
  }
}
