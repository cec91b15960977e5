/**
 * One attempt to deliver one event to one channel: a signed webhook, a chat message or a mail.
 * The same delivery id on every attempt: it is the webhook's `webhook-id` and the mail's
 * Message-ID, so a receiver can tell a repeat.
 */
import type { Channel } from './channels.js';
import { DeliveryError } from './delivery-error.js';
import { chatBody, eventLines, eventSubject, webhookBody } from './event-text.js';
import type { NotifyEvent } from './notify-event.js';
import { postJson } from './post-json.js';
import { sendEmail } from './send-email.js';
import { signWebhook } from './standard-webhooks.js';

export interface DeliverOptions {
  /** A receiver that does not answer within this is cut off. */
  timeoutMs: number;
  allowedHosts?: readonly string[];
  now?: Date;
  /** Aborts the attempt (a stopping worker): it fails and is tried again. */
  signal?: AbortSignal;
}

/** Delivers; returns what the receiver answered, in a few words. Throws a DeliveryError. */
export async function deliver(
  channel: Channel,
  event: NotifyEvent,
  deliveryId: string,
  options: DeliverOptions,
): Promise<string> {
  if (channel.problem || channel.url === undefined) {
    throw new DeliveryError(
      `channel ${channel.name} cannot deliver: ${channel.problem ?? 'no URL'}`,
    );
  }
  if (channel.kind === 'webhook') {
    const body = webhookBody(event);
    const headers = signWebhook(channel.signingKey!, deliveryId, body, options.now);
    const status = await postJson(channel.url, body, { ...options, headers: { ...headers } });
    return `HTTP ${status}`;
  }
  if (channel.kind === 'chat') {
    const status = await postJson(channel.url, chatBody(event), { ...options, headers: {} });
    return `HTTP ${status}`;
  }
  const host = new URL(channel.url).hostname;
  return sendEmail(
    { url: channel.url, ...channel.smtp! },
    {
      subject: eventSubject(event),
      text: eventLines(event).join('\n'),
      messageId: `<${deliveryId}@porter.${host}>`,
    },
    options,
  );
}
