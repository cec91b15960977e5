/**
 * The audit trail: a Redis Stream, `<prefix>:{security}:audit`, written only by XADD
 * (append-only), trimmed by age (MINID, PORTER_AUDIT_RETENTION_DAYS) as entries are added. When
 * PORTER_AUDIT_FILE is set, each event is also appended to that file as one JSON line, for a log
 * shipper.
 */
import { appendFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import { securityKey } from '../redis/key-tags.js';
import type { AuditEvent } from './audit-event.js';

export interface AuditLogOptions {
  redis: Redis;
  prefix: string;
  retentionDays: number;
  /** JSON-lines copy of every event. */
  file?: string;
}

export interface AuditQuery {
  /** Events at or after this time. */
  since?: Date;
  /** Only events whose principal's name (or shown name) contains this text. */
  who?: string;
  /** Only events of this action (prefix match: `import.` takes every import action). */
  action?: string;
  /** At most this many, newest first. @defaultValue 200 */
  limit?: number;
}

export function newActionId(): string {
  return randomUUID();
}

export class AuditLog {
  readonly key: string;
  constructor(private readonly options: AuditLogOptions) {
    this.key = securityKey(options.prefix, 'audit');
  }

  /** The XADD of an event, trimmed by age, on a MULTI or pipeline that also does the action. */
  addTo(chain: ChainableCommander, event: AuditEvent): ChainableCommander {
    return chain.xadd(this.key, 'MINID', '~', this.minId(), '*', 'e', JSON.stringify(event));
  }

  /** Appends an event (and its JSON line); returns it with its stream id. */
  async append(event: AuditEvent): Promise<AuditEvent> {
    const id = await this.options.redis.xadd(
      this.key,
      'MINID',
      '~',
      this.minId(),
      '*',
      'e',
      JSON.stringify(event),
    );
    const stored = { ...event, id: id ?? undefined };
    await this.copyToFile(stored);
    return stored;
  }

  /** After a MULTI that held `addTo`, the file copy of its event. */
  async copyToFile(event: AuditEvent): Promise<void> {
    if (!this.options.file) return;
    await appendFile(this.options.file, `${JSON.stringify(event)}\n`, { mode: 0o600 });
  }

  /** Events newest first. */
  async read(query: AuditQuery = {}): Promise<AuditEvent[]> {
    const limit = query.limit ?? 200;
    const start = query.since ? String(query.since.getTime()) : '-';
    const events: AuditEvent[] = [];
    let end = '+';
    // read back in pages, filtering, until enough match or the stream's start is reached
    for (;;) {
      const page = await this.options.redis.xrevrange(this.key, end, start, 'COUNT', 500);
      for (const [id, fields] of page) {
        const event = parse(id, fields);
        if (event && matches(event, query)) events.push(event);
        if (events.length >= limit) return events;
      }
      if (page.length < 500) return events;
      end = `(${page[page.length - 1]![0]}`;
    }
  }

  private minId(): string {
    return String(Date.now() - Math.round(this.options.retentionDays * 86_400_000));
  }
}

function parse(id: string, fields: string[]): AuditEvent | undefined {
  const index = fields.indexOf('e');
  if (index < 0) return undefined;
  try {
    return { ...(JSON.parse(fields[index + 1]!) as AuditEvent), id };
  } catch {
    return undefined;
  }
}

function matches(event: AuditEvent, query: AuditQuery): boolean {
  if (query.who) {
    const wanted = query.who.toLowerCase();
    const names = [event.who.name, event.who.display ?? ''].map((name) => name.toLowerCase());
    if (!names.some((name) => name.includes(wanted))) return false;
  }
  if (query.action && !event.action.startsWith(query.action)) return false;
  return true;
}
