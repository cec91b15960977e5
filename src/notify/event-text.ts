/** An event in words: the lines of a mail, the short text of a chat message, a webhook's body. */
import type { NotifyEvent } from './notify-event.js';

function countsLine(counts: Record<string, number>): string | undefined {
  const parts = Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name} ${count}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/** Every line of the event, title first (the body of a mail). */
export function eventLines(event: NotifyEvent): string[] {
  const lines = [event.title, ''];
  const ids = Object.entries(event.ids).map(([name, id]) => `${name} ${id}`);
  if (event.target) ids.push(`target ${event.target}`);
  if (ids.length > 0) lines.push(ids.join(' · '));
  const counts = countsLine(event.counts);
  if (counts) lines.push(`Counts: ${counts}`);
  if (event.keys && event.keys.length > 0) lines.push(`First: ${event.keys.join(', ')}`);
  if (event.why.length > 0) lines.push('', 'Why:', ...event.why.map((line) => `  ${line}`));
  if (event.startedBy) {
    const behalf = event.onBehalfOf ? ` on behalf of ${event.onBehalfOf}` : '';
    lines.push('', `Started by ${event.startedBy}${behalf}.`);
  }
  if (event.action) lines.push(event.action);
  if (event.link) lines.push('', event.link);
  lines.push('', `${event.name} · ${event.id} · ${event.at}`);
  return lines;
}

/** The subject of a mail. */
export function eventSubject(event: NotifyEvent): string {
  return `[porter] ${event.title}`;
}

/**
 * A chat message: the body Slack and Teams incoming webhooks both take, `{"text": …}`, a few
 * lines long, with the console link.
 */
export function chatBody(event: NotifyEvent): string {
  const lines = [`*${event.title}*`];
  const counts = countsLine(event.counts);
  if (counts) lines.push(counts);
  if (event.why[0]) lines.push(event.why[0]);
  if (event.action) lines.push(event.action);
  if (event.link) lines.push(event.link);
  return JSON.stringify({ text: lines.join('\n') });
}

/** A webhook's body, the shape the Standard Webhooks specification suggests. */
export function webhookBody(event: NotifyEvent): string {
  return JSON.stringify({ type: event.name, timestamp: event.at, data: event });
}
