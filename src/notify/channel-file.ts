/**
 * The channels file (PORTER_NOTIFY_FILE): a JSON object of channel name → channel, shaped like
 * the targets file. A secret is never written in it: the file names where it is read from.
 */
import { z } from 'zod';
import { TARGET_NAME, TARGET_NAME_TEXT, secretSourceSchema } from '../targets/target-file.js';
import { NOTIFY_EVENT_NAMES } from './notify-event.js';

/** Channel names follow the rule of target names. */
export const CHANNEL_NAME = TARGET_NAME;
export const CHANNEL_NAME_TEXT = TARGET_NAME_TEXT;

const eventList = z
  .array(z.enum(NOTIFY_EVENT_NAMES, { error: `an event name: ${NOTIFY_EVENT_NAMES.join(', ')}` }))
  .min(1)
  .optional();
const targetList = z
  .array(z.string().regex(TARGET_NAME, `a target name (${TARGET_NAME_TEXT})`))
  .min(1)
  .optional();

const common = {
  /** Events the channel is told of; unset: every one. */
  events: eventList,
  /** Only events about these targets (events about no target are always told); unset: all. */
  targets: targetList,
  /** One line about the channel, shown by `porter notify channels` and the console. */
  description: z.string().max(200).optional(),
};

export const webhookChannelSchema = z.strictObject({
  kind: z.literal('webhook'),
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  /** The Standard Webhooks signing secret, `whsec_` then base64. */
  secret: secretSourceSchema,
  ...common,
});

export const chatChannelSchema = z.strictObject({
  kind: z.literal('chat'),
  /** A Slack or Teams incoming webhook: its URL is its secret, so it may be read from one. */
  url: z.union([
    z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
    secretSourceSchema,
  ]),
  ...common,
});

export const emailChannelSchema = z.strictObject({
  kind: z.literal('email'),
  /** smtp://host:port (STARTTLS when offered) or smtps://host:port (TLS at once). */
  url: z.url({ protocol: /^smtps?$/, error: 'an smtp:// or smtps:// URL' }),
  /** The SMTP user and password, when the server asks for them. */
  user: z.string().min(1).max(200).optional(),
  password: secretSourceSchema.optional(),
  from: z.string().min(3).max(300),
  to: z.array(z.string().min(3).max(300)).min(1).max(50),
  ...common,
});

export const channelEntrySchema = z.discriminatedUnion('kind', [
  webhookChannelSchema,
  chatChannelSchema,
  emailChannelSchema,
]);
export type ChannelEntry = z.infer<typeof channelEntrySchema>;

export const channelsFileSchema = z.record(
  z.string().regex(CHANNEL_NAME, CHANNEL_NAME_TEXT),
  channelEntrySchema,
);
