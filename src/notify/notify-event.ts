/**
 * What a person must act on, as an event: its name, the ids and target it is about, its
 * counts, the first reasons (the "why" lines), who started the work and where to look in the
 * console. An event carries no secret and no personal data beyond counts and the first keys.
 */
import { randomUUID } from 'node:crypto';

/** Every event porter tells channels of (docs/notifications.md says when each happens). */
export const NOTIFY_EVENT_NAMES = [
  'import.finished',
  'import.failed',
  'target.unreachable',
  'sync.held',
  'plan.approved',
  'plan.dropped',
  'breaker.paused',
  'breaker.resumed',
  'schedule.failed',
  'schedule.missed',
  'export.finished',
  'export.failed',
  'scim.deletes_held',
  'token.expiring',
  // a message a person asked for with `porter notify test`
  'notify.test',
] as const;
export type NotifyEventName = (typeof NOTIFY_EVENT_NAMES)[number];

export function isNotifyEventName(name: string): name is NotifyEventName {
  return (NOTIFY_EVENT_NAMES as readonly string[]).includes(name);
}

/** Reasons an event carries at most. */
export const MAX_WHY_LINES = 5;
/** Keys (usernames, group names) an event names at most, e.g. the first locks of a held sync. */
export const MAX_KEYS = 10;

export interface NotifyEvent {
  /** Stable per occurrence: the same event emitted twice has the same id (see eventId). */
  id: string;
  name: NotifyEventName;
  /** When it happened, ISO 8601. */
  at: string;
  /** The target it is about, when it is about one. */
  target?: string;
  /** One line for people: the subject of a mail, the first line of a chat message. */
  title: string;
  /** The ids it is about: importId, exportId, schedule, tokenId… */
  ids: Record<string, string>;
  /** Counts (records per status or action, locks, deletes…). */
  counts: Record<string, number>;
  /** The first reasons, at most MAX_WHY_LINES. */
  why: string[];
  /** The first keys it names (the first locks and deletes of a held sync), at most MAX_KEYS. */
  keys?: string[];
  /** Who started the work (`schedule:<name>`, `token:<name>`…), and for whom. */
  startedBy?: string;
  onBehalfOf?: string;
  /** Who must act, in words (e.g. "an approver other than schedule:nightly"). */
  action?: string;
  /** Its page in the console, when PORTER_PUBLIC_URL is set. */
  link?: string;
}

/** What an emitter gives: the rest (id, time, link) is filled in by the notifier. */
export type NotifyEventInput = Omit<NotifyEvent, 'id' | 'at' | 'link'> & {
  /**
   * What makes this occurrence one: the same key emits the same event once (an import's end
   * seen by two workers). Unset: every emit is a new occurrence.
   */
  key?: string;
  /** The console page, as a path after `#/` (e.g. `imports/imp_…`). */
  page?: string;
};

/** The event id: derived from the key, so that emitting the same occurrence twice is one event. */
export function eventId(input: Pick<NotifyEventInput, 'name' | 'key'>): string {
  if (input.key === undefined) return `evt_${randomUUID().replaceAll('-', '')}`;
  // BullMQ job ids may not hold ':'; keys are ids and names already
  return `evt_${input.name.replace('.', '_')}_${input.key.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(
    0,
    200,
  );
}

/** The console link of a page under PORTER_PUBLIC_URL. */
export function consoleLink(
  publicUrl: string | undefined,
  page: string | undefined,
): string | undefined {
  if (publicUrl === undefined) return undefined;
  const base = publicUrl.replace(/\/+$/, '');
  return `${base}/console/${page ? `#/${page}` : ''}`;
}

/** The event with its id, time and link. */
export function completeEvent(
  input: NotifyEventInput,
  publicUrl: string | undefined,
  now = new Date(),
): NotifyEvent {
  const { key: _key, page, ...rest } = input;
  const link = consoleLink(publicUrl, page);
  return {
    ...rest,
    id: eventId(input),
    at: now.toISOString(),
    why: rest.why.slice(0, MAX_WHY_LINES),
    ...(rest.keys ? { keys: rest.keys.slice(0, MAX_KEYS) } : {}),
    ...(link ? { link } : {}),
  };
}
