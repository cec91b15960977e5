/**
 * The channels of a process, read from PORTER_NOTIFY_FILE at start-up. Each URL is checked then
 * (scheme, host against PORTER_NOTIFY_ALLOWED_HOSTS, a webhook secret of the `whsec_` form);
 * a bad file stops start-up with PORTER_CONFIG_INVALID naming the channel and field. A secret
 * that cannot be read yet (an unset variable, a file not mounted) leaves its channel unusable:
 * its deliveries fail and are retried, as for a receiver that is down.
 */
import { dirname, resolve } from 'node:path';
import type { Env } from '../config/env.js';
import { PorterError } from '../errors/porter-error.js';
import { RegularFileError, readRegularFileSync } from '../util/regular-file.js';
import { MAX_TARGETS_FILE_BYTES, displayUrl, readSecret } from '../targets/targets.js';
import type { SecretSource } from '../targets/target-file.js';
import { channelsFileSchema, type ChannelEntry } from './channel-file.js';
import type { NotifyEvent, NotifyEventName } from './notify-event.js';
import { decodeWebhookSecret } from './standard-webhooks.js';
import { hostAllowed } from './host-policy.js';

const VARIABLE = 'PORTER_NOTIFY_FILE';

/** What may be shown of a channel: never a secret, only where it is read from. */
export interface ChannelSummary {
  name: string;
  kind: ChannelEntry['kind'];
  /** Where it sends: a URL without credentials (a chat URL read from a secret: its source). */
  url: string;
  description?: string;
  events: NotifyEventName[] | 'all';
  targets: string[] | 'all';
  /** Email: the recipients. */
  to?: string[];
  /** Why the channel cannot deliver (a secret that cannot be read), if so. */
  problem?: string;
}

/** A channel as a process uses it, secrets read. */
export interface Channel {
  readonly name: string;
  readonly kind: ChannelEntry['kind'];
  readonly summary: ChannelSummary;
  /** Where deliveries go; undefined while its secret cannot be read. */
  readonly url?: string;
  /** Webhook: the signing key (the bytes after `whsec_`). */
  readonly signingKey?: Buffer;
  readonly smtp?: { user?: string; password?: string; from: string; to: string[] };
  readonly problem?: string;
  readonly entry: ChannelEntry;
}

/** Whether the channel is told of the event. */
export function channelWants(
  channel: Channel,
  event: Pick<NotifyEvent, 'name' | 'target'>,
): boolean {
  const { events, targets } = channel.entry;
  // a test message goes where it is sent, whatever the channel listens to
  if (event.name === 'notify.test') return false;
  if (events && !events.includes(event.name)) return false;
  if (targets && event.target !== undefined && !targets.includes(event.target)) return false;
  return true;
}

export class ChannelSet {
  private readonly byName: Map<string, Channel>;
  constructor(channels: Iterable<Channel>) {
    this.byName = new Map([...channels].map((channel) => [channel.name, channel]));
  }
  list(): Channel[] {
    return [...this.byName.values()];
  }
  get(name: string): Channel | undefined {
    return this.byName.get(name);
  }
  /** The channels an event goes to. */
  wanting(event: Pick<NotifyEvent, 'name' | 'target'>): Channel[] {
    return this.list().filter((channel) => channelWants(channel, event));
  }
  /** The channel, or PORTER_NOT_FOUND naming the ones there are. */
  require(name: string): Channel {
    const channel = this.byName.get(name);
    if (channel) return channel;
    throw new PorterError(
      'PORTER_NOT_FOUND',
      `no channel "${name}" is configured here (known: ${[...this.byName.keys()].join(', ') || 'none'}); channels come from ${VARIABLE}`,
      { details: { channel: name } },
    );
  }
}

/** A URL without credentials and without its query (which may carry a token). */
function withoutQuery(url: string): string {
  const parsed = new URL(displayUrl(url));
  parsed.search = '';
  return parsed.toString();
}

function invalid(message: string): PorterError {
  return new PorterError('PORTER_CONFIG_INVALID', `${VARIABLE}: ${message}`, {
    details: { field: VARIABLE },
  });
}

/** Checks a URL's host against the allow-list, at start-up. */
function checkHost(name: string, url: string, allowed: readonly string[] | undefined): void {
  const host = new URL(url).hostname;
  if (!hostAllowed(host, allowed)) {
    throw invalid(
      `${name}.url: host ${host} is not in PORTER_NOTIFY_ALLOWED_HOSTS (${allowed!.join(', ')})`,
    );
  }
}

function buildChannel(
  name: string,
  entry: ChannelEntry,
  env: Env,
  source: NodeJS.ProcessEnv,
  baseDir: string,
): Channel {
  const problems: string[] = [];
  const secret = (from: SecretSource, field: string): string | undefined => {
    const read = readSecret(from, source, baseDir, `${name}.${field}`, VARIABLE);
    if (read.problem) problems.push(read.problem);
    return read.value;
  };
  const allowed = env.PORTER_NOTIFY_ALLOWED_HOSTS;
  const common = {
    name,
    kind: entry.kind,
    ...(entry.description ? { description: entry.description } : {}),
    events: entry.events ?? ('all' as const),
    targets: entry.targets ?? ('all' as const),
  };
  if (entry.kind === 'webhook') {
    checkHost(name, entry.url, allowed);
    const text = secret(entry.secret, 'secret');
    let signingKey: Buffer | undefined;
    if (text !== undefined) {
      signingKey = decodeWebhookSecret(text);
      if (!signingKey)
        throw invalid(`${name}.secret: not a Standard Webhooks secret (whsec_ then base64)`);
    }
    const problem = problems.join('; ') || undefined;
    return {
      name,
      kind: 'webhook',
      entry,
      url: entry.url,
      signingKey,
      problem,
      summary: { ...common, url: withoutQuery(entry.url), ...(problem ? { problem } : {}) },
    };
  }
  if (entry.kind === 'chat') {
    const url = typeof entry.url === 'string' ? entry.url : secret(entry.url, 'url');
    if (url !== undefined) {
      if (!/^https?:\/\//i.test(url)) throw invalid(`${name}.url: an http:// or https:// URL`);
      checkHost(name, url, allowed);
    }
    const problem = problems.join('; ') || undefined;
    // an incoming webhook's path is its secret: only its origin is shown
    const shown =
      typeof entry.url === 'string'
        ? `${new URL(entry.url).origin}/…`
        : 'env' in entry.url
          ? `env:${entry.url.env}`
          : `file:${entry.url.file}`;
    return {
      name,
      kind: 'chat',
      entry,
      url,
      problem,
      summary: { ...common, url: shown, ...(problem ? { problem } : {}) },
    };
  }
  checkHost(name, entry.url, allowed);
  const password = entry.password ? secret(entry.password, 'password') : undefined;
  const problem = problems.join('; ') || undefined;
  return {
    name,
    kind: 'email',
    entry,
    url: entry.url,
    smtp: { user: entry.user, password, from: entry.from, to: entry.to },
    problem,
    summary: {
      ...common,
      url: displayUrl(entry.url),
      to: entry.to,
      ...(problem ? { problem } : {}),
    },
  };
}

/** The channels of this process: none without PORTER_NOTIFY_FILE. */
export function loadChannels(env: Env, source: NodeJS.ProcessEnv = process.env): ChannelSet {
  const path = env.PORTER_NOTIFY_FILE;
  if (path === undefined) return new ChannelSet([]);
  let json: unknown;
  try {
    json = JSON.parse(readRegularFileSync(path, MAX_TARGETS_FILE_BYTES).toString('utf8'));
  } catch (error) {
    const why = error instanceof RegularFileError ? error.message : 'is not valid JSON';
    throw invalid(`${path} ${why}`);
  }
  const parsed = channelsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') || '(file)';
    const inner = issue?.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
    const why = inner ? `not a channel name (${inner})` : (issue?.message ?? 'invalid');
    throw invalid(`${where}: ${why}`);
  }
  const baseDir = dirname(resolve(path));
  return new ChannelSet(
    Object.entries(parsed.data).map(([name, entry]) =>
      buildChannel(name, entry, env, source, baseDir),
    ),
  );
}
