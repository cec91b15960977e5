/**
 * What SCIM changed, kept as imports (docs/scim.md#what-scim-changed). The user changes one
 * principal (an identity provider's token) makes on one target within one clock hour are the
 * records of one import with source `scim`, started by that principal: listed by `porter list
 * --source scim`, reported by `porter report`, shown in the console's imports and target pages,
 * and turned back by `porter undo` like any import. Each change keeps its undo entry
 * (src/plan/undo-entry.ts) as an import's record does.
 *
 * A journal is `receiving` while its hour lasts. It ends (completed) at the first change of the
 * same principal and target after its hour, or when an undo asks for it (endScimJournal).
 */
import type { UserRecord } from '../admin/schemas.js';
import {
  SCIM_SOURCE,
  type ImportOptions,
  type RecordAction,
  type RecordResult,
} from '../model/import.js';
import { mergeRecord } from '../plan/merge.js';
import { encodeUndoEntry, undoEntryOf, type UndoEntry } from '../plan/undo-entry.js';
import { plannedOp } from '../plan/planned-op.js';
import { hashTag } from '../redis/key-tags.js';
import { withRedisLock } from '../redis/redis-lock.js';
import { currentActor } from '../auth/acting.js';
import { bindTarget } from '../targets/job-target.js';
import type { PorterContext } from './context.js';
import { UndoLog } from '../results/undo-log.js';

export { SCIM_SOURCE };

/**
 * The options of an import SCIM keeps (a journal, a held plan): users of `target`, bound to it
 * as a write (src/targets/job-target.ts).
 */
export function scimImportOptions(
  context: PorterContext,
  target: string,
  mode: ImportOptions['mode'],
): ImportOptions {
  const options: ImportOptions = {
    target,
    resource: 'users',
    mode,
    batchSize: 100,
    listSeparator: '|',
    emptyAsClear: false,
    allowAdmin: false,
  };
  return { ...options, ...bindTarget(context.targets, options, { writes: true }).ref };
}

/** One change SCIM applied to a DAM user. */
export interface ScimChange {
  action: Extract<RecordAction, 'create' | 'update' | 'lock' | 'delete'>;
  userId: number;
  username: string;
  /** The user before the change (not for a create). */
  before?: UserRecord;
  /** The record written (a create or update); none for a delete. */
  written?: UserRecord;
}

const JOURNAL_LOCK = { ttlMs: 10_000, waitMs: 5_000 };

/** Changes waiting for this tick's keeping, by prefix, target and principal. */
const keeping = new Map<string, { changes: ScimChange[]; kept: Promise<void> }>();

/** The journals this process is finding or opening, by prefix, target, principal and hour. */
const asking = new Map<string, Promise<string>>();

/** The columns of a journal's report: what SCIM did, to whom. */
const COLUMNS = ['userId', 'userName', 'change'];

interface JournalKeys {
  /** Hash: principal → `<importId> <hour>` of the principal's open journal on the target. */
  open: string;
  lock: string;
  rows(importId: string): string;
}

function journalKeys(context: PorterContext, target: string): JournalKeys {
  const base = `${context.env.PORTER_PREFIX}:scim:${hashTag(target)}:journal`;
  return {
    open: `${base}:open`,
    lock: `${base}:lock`,
    rows: (importId) => `${base}:rows:${importId}`,
  };
}

/** The clock hour of `ms`, as a number (hours since the epoch). */
function hourOf(ms: number): number {
  return Math.floor(ms / 3_600_000);
}

/** The undo entry of a change, at `row`. */
function undoOf(change: ScimChange, row: number): UndoEntry | undefined {
  const base = { row, key: change.username, basis: undefined };
  if (change.action === 'create') {
    const payload = { ...change.written } as Record<string, unknown>;
    delete payload.userId;
    const op = plannedOp(base, 'create', 'POST', payload, true, []);
    return undoEntryOf('users', op, { status: 'succeeded', id: change.userId });
  }
  if (change.action === 'delete') {
    const op = plannedOp(base, 'delete', 'DELETE', { userId: change.userId }, false, [], {
      existingId: change.userId,
      before: change.before as Record<string, unknown>,
    });
    return undoEntryOf('users', op, { status: 'succeeded' });
  }
  const before = change.before as Record<string, unknown>;
  const { changes } = mergeRecord('users', before, change.written as Record<string, unknown>);
  const op = plannedOp(
    base,
    change.action,
    'PUT',
    change.written as Record<string, unknown>,
    false,
    [],
    { existingId: change.userId, changes },
  );
  return undoEntryOf('users', op, { status: 'succeeded' });
}

export class ScimJournal {
  private readonly keys: JournalKeys;

  constructor(
    private readonly context: PorterContext,
    private readonly target: string,
  ) {
    this.keys = journalKeys(context, target);
  }

  /** Keeps a change SCIM applied in its principal's journal of this hour. */
  async record(change: ScimChange): Promise<void> {
    const principal = currentActor()?.principal?.name ?? 'unknown';
    // the changes of one moment (a gathered batch of creates) are kept in one go
    const key = `${this.context.env.PORTER_PREFIX}\n${this.target}\n${principal}`;
    let pending = keeping.get(key);
    if (!pending) {
      const changes: ScimChange[] = [];
      const kept = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        keeping.delete(key);
        return this.keep(principal, changes);
      });
      pending = { changes, kept };
      keeping.set(key, pending);
    }
    pending.changes.push(change);
    return pending.kept;
  }

  /** Keeps changes in the principal's journal: their rows, undo entries, then results. */
  private async keep(principal: string, changes: readonly ScimChange[]): Promise<void> {
    const { redis, store } = this.context;
    const journal = await this.journalOf(principal);
    const rows = this.keys.rows(journal);
    const [[, last]] = (await redis
      .multi()
      .incrby(rows, changes.length)
      .expire(rows, store.ttlSeconds)
      .exec()) as [[null, number], [null, number]];
    const first = last - changes.length + 1;
    const entries = new Map<number, string>();
    const results = changes.map((change, index): RecordResult => {
      const row = first + index;
      const entry = undoOf(change, row);
      if (entry) entries.set(row, encodeUndoEntry('users', entry));
      return {
        row,
        key: change.username,
        action: change.action,
        status: 'succeeded',
        id: change.userId,
        input: {
          userId: String(change.userId),
          userName: change.username,
          change: change.action,
        },
      };
    });
    // the undo entries before the results: a result whose entry is missing would undo nothing
    if (entries.size > 0) {
      await new UndoLog(redis, this.context.env.PORTER_PREFIX, store.ttlSeconds).keep(
        journal,
        entries,
      );
    }
    await store.recordResults(journal, results);
  }

  /**
   * The principal's open journal of this hour: opened when there is none, ending an older one.
   * The changes of one process that ask at once share one answer.
   */
  private journalOf(principal: string): Promise<string> {
    const hour = hourOf(Date.now());
    const key = `${this.context.env.PORTER_PREFIX}\n${this.target}\n${principal}\n${hour}`;
    let asked = asking.get(key);
    if (!asked) {
      asked = this.findOrOpen(principal, hour).finally(() => asking.delete(key));
      asking.set(key, asked);
    }
    return asked;
  }

  private async findOrOpen(principal: string, hour: number): Promise<string> {
    const open = await this.openOf(principal);
    if (open && open.hour === hour) return open.id;
    return withRedisLock(this.context.redis, this.keys.lock, JOURNAL_LOCK, async () => {
      const again = await this.openOf(principal);
      if (again && again.hour === hour) return again.id;
      if (again) await this.end(principal, again.id);
      const info = await this.context.store.create({
        options: scimImportOptions(this.context, this.target, 'upsert'),
        source: SCIM_SOURCE,
        columns: COLUMNS,
      });
      await this.context.redis
        .multi()
        .hset(this.keys.open, principal, `${info.id} ${hour}`)
        .expire(this.keys.open, this.context.store.ttlSeconds)
        .exec();
      return info.id;
    });
  }

  private async openOf(principal: string): Promise<{ id: string; hour: number } | undefined> {
    const value = await this.context.redis.hget(this.keys.open, principal);
    if (value === null) return undefined;
    const [id, hour] = value.split(' ');
    return { id: id!, hour: Number(hour) };
  }

  /** Ends a journal: its records are all it holds. */
  private async end(principal: string, importId: string): Promise<void> {
    const { redis, store } = this.context;
    const rows = Number((await redis.get(this.keys.rows(importId))) ?? 0);
    // a journal whose import expired meanwhile has nothing left to end
    if (await store.get(importId)) await store.markReceived(importId, { total: rows, batches: 0 });
    await redis.hdel(this.keys.open, principal);
    await redis.unlink(this.keys.rows(importId));
  }

  /** Ends the journal `importId` if it is one of this target's open ones; whether it was. */
  async endIfOpen(importId: string): Promise<boolean> {
    return withRedisLock(this.context.redis, this.keys.lock, JOURNAL_LOCK, async () => {
      const open = await this.context.redis.hgetall(this.keys.open);
      for (const [principal, value] of Object.entries(open)) {
        if (value.split(' ')[0] !== importId) continue;
        await this.end(principal, importId);
        return true;
      }
      return false;
    });
  }
}

/**
 * Ends a SCIM journal that is still open, so that it can be undone or read as final; nothing
 * for any other import.
 */
export async function endScimJournal(
  context: PorterContext,
  info: { id: string; source?: string; settled: boolean; options: { target?: string } },
): Promise<void> {
  if (info.source !== SCIM_SOURCE || info.settled) return;
  const target = info.options.target ?? 'default';
  await new ScimJournal(context, target).endIfOpen(info.id);
}
