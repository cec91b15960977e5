/**
 * What SCIM changed, kept as imports (docs/scim.md#what-scim-changed). The user changes one
 * principal (an identity provider's token) makes on one target within one clock hour are the
 * records of one import with source `scim`, started by that principal, and its group changes
 * the records of another (an import of groups): listed by `porter list --source scim`, reported
 * by `porter report`, shown in the console's imports and target pages, and turned back by
 * `porter undo` like any import. Each change keeps its undo entry (src/plan/undo-entry.ts) as
 * an import's record does.
 *
 * A journal is `receiving` while its hour lasts. It ends (completed) at the first change of the
 * same principal and target after its hour, or when an undo asks for it (endScimJournal).
 */
import { RESOURCES, type ResourceName } from '../admin/resources.js';
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

/** The resources SCIM changes: users and groups. */
export type ScimResource = Extract<ResourceName, 'users' | 'groups'>;

/**
 * The options of an import SCIM keeps (a journal, a held plan): records of `resource` on
 * `target`, bound to it as a write (src/targets/job-target.ts).
 */
export function scimImportOptions(
  context: PorterContext,
  target: string,
  mode: ImportOptions['mode'],
  resource: ScimResource = 'users',
): ImportOptions {
  const options: ImportOptions = {
    target,
    resource,
    mode,
    batchSize: 100,
    listSeparator: '|',
    emptyAsClear: false,
    allowAdmin: false,
  };
  return { ...options, ...bindTarget(context.targets, options, { writes: true }).ref };
}

/** One change SCIM applied to a DAM user or group. */
export interface ScimChange {
  action: Extract<RecordAction, 'create' | 'update' | 'lock' | 'delete'>;
  /** The record's id (a user's userId, a group's id). */
  id: number;
  /** Its name (a user's username, a group's name). */
  key: string;
  /** The record before the change (not for a create). */
  before?: object;
  /** The record written (a create or update); none for a delete. */
  written?: object;
}

const JOURNAL_LOCK = { ttlMs: 10_000, waitMs: 5_000 };

/** Changes waiting for this tick's keeping, by prefix, target and principal. */
const keeping = new Map<string, { changes: ScimChange[]; kept: Promise<void> }>();

/** The journals this process is finding or opening, by prefix, target, principal and hour. */
const asking = new Map<string, Promise<string>>();

/** The columns of a journal's report: what SCIM did, to whom. */
const COLUMNS: Readonly<Record<ScimResource, readonly [string, string, string]>> = {
  users: ['userId', 'userName', 'change'],
  groups: ['groupId', 'displayName', 'change'],
};

interface JournalKeys {
  /** Hash: principal → `<importId> <hour>` of the principal's open journal on the target. */
  open: string;
  lock: string;
  rows(importId: string): string;
}

function journalKeys(context: PorterContext, target: string, resource: ScimResource): JournalKeys {
  const base = `${context.env.PORTER_PREFIX}:scim:${hashTag(target)}:journal${resource === 'groups' ? ':groups' : ''}`;
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

/** The undo entry of a change to a record of `resource`, at `row`. */
function undoOf(resource: ScimResource, change: ScimChange, row: number): UndoEntry | undefined {
  const idField = RESOURCES[resource].idField;
  const base = { row, key: change.key, basis: undefined };
  if (change.action === 'create') {
    const payload = { ...change.written } as Record<string, unknown>;
    delete payload[idField];
    const op = plannedOp(base, 'create', 'POST', payload, true, []);
    return undoEntryOf(resource, op, { status: 'succeeded', id: change.id });
  }
  if (change.action === 'delete') {
    const op = plannedOp(base, 'delete', 'DELETE', { [idField]: change.id }, false, [], {
      existingId: change.id,
      before: change.before as Record<string, unknown>,
    });
    return undoEntryOf(resource, op, { status: 'succeeded' });
  }
  const before = change.before as Record<string, unknown>;
  const { changes } = mergeRecord(resource, before, change.written as Record<string, unknown>);
  const op = plannedOp(
    base,
    change.action,
    'PUT',
    change.written as Record<string, unknown>,
    false,
    [],
    { existingId: change.id, changes },
  );
  return undoEntryOf(resource, op, { status: 'succeeded' });
}

export class ScimJournal {
  private readonly keys: JournalKeys;

  constructor(
    private readonly context: PorterContext,
    private readonly target: string,
    private readonly resource: ScimResource = 'users',
  ) {
    this.keys = journalKeys(context, target, resource);
  }

  /** Keeps a change SCIM applied in its principal's journal of this hour. */
  async record(change: ScimChange): Promise<void> {
    const principal = currentActor()?.principal?.name ?? 'unknown';
    // the changes of one moment (a gathered batch of creates) are kept in one go
    const key = `${this.context.env.PORTER_PREFIX}\n${this.target}\n${this.resource}\n${principal}`;
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
      const entry = undoOf(this.resource, change, row);
      if (entry) entries.set(row, encodeUndoEntry(this.resource, entry));
      const [idColumn, nameColumn, changeColumn] = COLUMNS[this.resource];
      return {
        row,
        key: change.key,
        action: change.action,
        status: 'succeeded',
        id: change.id,
        input: {
          [idColumn]: String(change.id),
          [nameColumn]: change.key,
          [changeColumn]: change.action,
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
    const key = `${this.context.env.PORTER_PREFIX}\n${this.target}\n${this.resource}\n${principal}\n${hour}`;
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
        options: scimImportOptions(this.context, this.target, 'upsert', this.resource),
        source: SCIM_SOURCE,
        columns: [...COLUMNS[this.resource]],
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
  info: {
    id: string;
    source?: string;
    settled: boolean;
    options: { target?: string; resource: ResourceName };
  },
): Promise<void> {
  if (info.source !== SCIM_SOURCE || info.settled) return;
  if (info.options.resource !== 'users' && info.options.resource !== 'groups') return;
  const target = info.options.target ?? 'default';
  await new ScimJournal(context, target, info.options.resource).endIfOpen(info.id);
}
