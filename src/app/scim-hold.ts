/**
 * The deletion hold of SCIM (docs/scim.md#the-deletion-hold): a target takes at most
 * `scim.maxDeletesPerHour` deletes and deactivations an hour from identity providers. One more
 * is not applied: it joins the target's held SCIM plan (an import in state `held`, one plan
 * while it is held), and the provider is answered 503 with Retry-After. An approver releases the
 * plan (`porter approve ID`, four eyes) or drops it (`porter cancel ID`). The provider's retry of
 * a held change is answered from what became of it: held still (503), applied (answered as done,
 * without a second write), failed (its error), dropped (409). Protected users (the target's
 * `scim.protect` list) are never deleted or deactivated.
 *
 * Group deletes count toward the same hourly budget; past it they are held in a plan of their
 * own (an import of groups), released and answered the same way.
 */
import { hashTag } from '../redis/key-tags.js';
import { ERROR_CODES, type ErrorCode } from '../errors/codes.js';
import { PorterError } from '../errors/porter-error.js';
import { SCIM_SOURCE, type RecordResult } from '../model/import.js';
import { RemovalBudget } from '../scim/removal-budget.js';
import type { PorterContext } from './context.js';
import { emitInBackground } from './notify.js';
import { withRedisLock } from '../redis/redis-lock.js';
import { scimImportOptions, type ScimResource } from './scim-journal.js';

/** The source label of a held SCIM plan and of the import that releases it. */
export const SCIM_PLAN_SOURCE = SCIM_SOURCE;
/** Seconds a provider is told to wait before it sends a held change again. */
export const SCIM_HELD_RETRY_AFTER_SECONDS = 300;
/** Opening or adding to the held plan takes a few Redis calls; a holder that died frees it soon. */
const PLAN_LOCK = { ttlMs: 10_000, waitMs: 5_000 };

/** A delete, or a deactivation (the DAM user locked). */
export type RemovalKind = 'delete' | 'lock';

/** A delete or deactivation of a user, or a delete of a group: the record's id and name. */
export interface Removal {
  kind: RemovalKind;
  id: number;
  name: string;
}

/** What porter keeps of a held change, by target and user, for the provider's retries. */
export interface HoldEntry {
  planId: string;
  kind: RemovalKind;
  row: number;
  outcome?: 'applied' | 'failed';
  code?: string;
  error?: string;
}

/** The event a held change raises: `scim.deletes_held`. */
export interface DeletesHeldEvent {
  type: 'scim.deletes_held';
  target: string;
  planId: string;
  /** Changes held in the plan so far, this one included. */
  held: number;
  change: Removal;
}

type DeletesHeldListener = (event: DeletesHeldEvent) => void;
const deletesHeldListeners = new Set<DeletesHeldListener>();

/**
 * The hook of `scim.deletes_held`: called once per change held (the channels of
 * PORTER_NOTIFY_FILE are told once per held plan). Returns the unsubscribe.
 */
export function onScimDeletesHeld(listener: DeletesHeldListener): () => void {
  deletesHeldListeners.add(listener);
  return () => deletesHeldListeners.delete(listener);
}

function emitDeletesHeld(event: DeletesHeldEvent): void {
  for (const listener of deletesHeldListeners) {
    try {
      listener(event);
    } catch {
      // a listener's failure is its own; the hold stands
    }
  }
}

/** Deletes and deactivations the target takes per hour: its targets-file setting, else the env. */
export function removalLimit(context: PorterContext, target: string): number {
  return (
    context.targets.get(target)?.summary.scim?.maxDeletesPerHour ??
    context.env.PORTER_SCIM_MAX_DELETES_PER_HOUR
  );
}

/** PORTER_SCIM_PROTECTED when the target's `scim.protect` names the user (any case). */
export function checkNotProtected(context: PorterContext, target: string, removal: Removal): void {
  const names = context.targets.get(target)?.summary.scim?.protect ?? [];
  const name = removal.name.toLowerCase();
  if (names.some((entry) => entry.toLowerCase() === name)) {
    throw new PorterError(
      'PORTER_SCIM_PROTECTED',
      `user ${removal.id} ("${removal.name}") is protected on this target: SCIM never ${removal.kind === 'delete' ? 'deletes' : 'deactivates'} it`,
    );
  }
}

export function heldError(planId: string, detail: string): PorterError {
  return new PorterError(
    'PORTER_SCIM_CHANGE_HELD',
    `${detail}; an approver releases it (porter approve ${planId}) or drops it (porter cancel ${planId})`,
    { details: { planId, retryAfterSeconds: SCIM_HELD_RETRY_AFTER_SECONDS } },
  );
}

export function holdKeys(
  context: PorterContext,
  target: string,
  resource: ScimResource = 'users',
): { entries: string; plan: string; lock: string; rows: (planId: string) => string } {
  const base = `${context.env.PORTER_PREFIX}:scim:${hashTag(target)}${resource === 'groups' ? ':groups' : ''}`;
  return {
    entries: `${base}:held`,
    plan: `${base}:plan`,
    lock: `${base}:plan-lock`,
    rows: (planId) => `${base}:plan-rows:${planId}`,
  };
}

/** The columns of a held plan's report, per resource. */
export const HELD_COLUMNS: Readonly<Record<ScimResource, readonly [string, string, string]>> = {
  users: ['userId', 'userName', 'change'],
  groups: ['groupId', 'displayName', 'change'],
};

export function heldInput(resource: ScimResource, removal: Removal): Record<string, unknown> {
  const [id, name, change] = HELD_COLUMNS[resource];
  return {
    [id]: removal.id,
    [name]: removal.name,
    [change]: removal.kind === 'delete' ? 'delete' : 'deactivate',
  };
}

/**
 * Holds being added in this process, per target, one after the other; across processes (two API
 * processes behind one address) the target's plan lock makes them take turns, so one plan is
 * opened at a time.
 */
const holding = new Map<string, Promise<unknown>>();

const WHAT: Readonly<Record<ScimResource, string>> = {
  users: 'deletes and deactivations',
  groups: 'group deletes',
};

export class ScimRemovalGuard {
  private readonly budget: RemovalBudget;
  private readonly keys: ReturnType<typeof holdKeys>;
  private readonly ttlSeconds: number;

  constructor(
    private readonly context: PorterContext,
    private readonly target: string,
    private readonly resource: ScimResource = 'users',
  ) {
    this.budget = new RemovalBudget(context.redis, context.env.PORTER_PREFIX);
    this.keys = holdKeys(context, target, resource);
    this.ttlSeconds = Math.ceil(context.env.PORTER_RESULT_TTL_DAYS * 86_400);
  }

  private async entry(id: number): Promise<HoldEntry | undefined> {
    const json = await this.context.redis.hget(this.keys.entries, String(id));
    return json === null ? undefined : (JSON.parse(json) as HoldEntry);
  }

  /** Whether a held `kind` of this record was released and applied: its retry is answered as done. */
  async released(id: number, kind: RemovalKind): Promise<boolean> {
    const entry = await this.entry(id);
    return entry?.kind === kind && entry.outcome === 'applied';
  }

  /**
   * Runs `apply` when the removal fits this hour's budget; else holds it and throws
   * PORTER_SCIM_CHANGE_HELD. A removal held before is answered from what became of it:
   * `{ applied: false }` when its release applied it (the caller answers as done, writing
   * nothing).
   */
  async guard<T>(
    removal: Removal,
    apply: () => Promise<T>,
  ): Promise<{ applied: true; value: T } | { applied: false }> {
    if (this.resource === 'users') checkNotProtected(this.context, this.target, removal);
    const entry = await this.entry(removal.id);
    if (entry && entry.kind === removal.kind) {
      if (entry.outcome === 'applied') return { applied: false };
      if (entry.outcome === 'failed') {
        await this.context.redis.hdel(this.keys.entries, String(removal.id));
        const code =
          (entry.code ?? '') in ERROR_CODES ? (entry.code as ErrorCode) : 'PORTER_CONFLICT';
        throw new PorterError(code, `the release of this held change failed: ${entry.error ?? ''}`);
      }
      const state = await this.context.store.getState(entry.planId);
      if (state === 'cancelled') {
        throw new PorterError(
          'PORTER_SCIM_CHANGE_DROPPED',
          `this ${removal.kind === 'delete' ? 'delete' : 'deactivation'} was held in plan ${entry.planId} and dropped; it is not applied`,
        );
      }
      if (state !== undefined) {
        throw heldError(
          entry.planId,
          state === 'held'
            ? `this change is held in plan ${entry.planId}, waiting for an approver`
            : `this change of plan ${entry.planId} is being released`,
        );
      }
      // the plan expired: the change is asked afresh
    }
    const place = await this.budget.reserve(this.target, removalLimit(this.context, this.target));
    if (place !== undefined) {
      try {
        return { applied: true, value: await apply() };
      } catch (error) {
        await this.budget.giveBack(this.target, place);
        throw error;
      }
    }
    const planId = await this.hold(removal);
    throw heldError(
      planId,
      `more than ${removalLimit(this.context, this.target)} deletes and deactivations (users and groups) this hour on target ${this.target}: this one is held in plan ${planId}, not applied`,
    );
  }

  /** Adds the removal to the target's held plan (opened when none is held); its id. */
  private async hold(removal: Removal): Promise<string> {
    const slot = `${this.target}\n${this.resource}`;
    const before = holding.get(slot) ?? Promise.resolve();
    const locked = (): Promise<string> =>
      withRedisLock(this.context.redis, this.keys.lock, PLAN_LOCK, () => this.holdNow(removal));
    const run = before.then(locked, locked);
    holding.set(slot, run);
    try {
      return await run;
    } finally {
      if (holding.get(slot) === run) holding.delete(slot);
    }
  }

  private async holdNow(removal: Removal): Promise<string> {
    const { redis, store } = this.context;
    let planId = await redis.get(this.keys.plan);
    const open = planId !== null && (await store.getState(planId)) === 'held';
    const result = (row: number): RecordResult => ({
      row,
      key: removal.name,
      action: removal.kind,
      status: 'planned',
      id: removal.id,
      input: heldInput(this.resource, removal),
    });
    let row: number;
    if (open) {
      row = await redis.incr(this.keys.rows(planId!));
      await store.addToHeld(planId!, [result(row)]);
    } else {
      const plan = await store.create({
        options: scimImportOptions(this.context, this.target, 'update', this.resource),
        source: SCIM_PLAN_SOURCE,
        columns: [...HELD_COLUMNS[this.resource]],
      });
      planId = plan.id;
      await store.holdAtEnd(planId);
      row = await redis.incr(this.keys.rows(planId));
      await redis.expire(this.keys.rows(planId), this.ttlSeconds);
      await store.recordResults(planId, [result(row)]);
      await store.markReceived(planId, { total: 1, batches: 0 });
      await redis.set(this.keys.plan, planId, 'EX', this.ttlSeconds);
    }
    const entry: HoldEntry = { planId: planId!, kind: removal.kind, row };
    await redis
      .multi()
      .hset(this.keys.entries, String(removal.id), JSON.stringify(entry))
      .expire(this.keys.entries, this.ttlSeconds)
      .exec();
    emitDeletesHeld({
      type: 'scim.deletes_held',
      target: this.target,
      planId: planId!,
      held: row,
      change: removal,
    });
    // one notice per held plan (its id is the plan's): the first change held opens it
    emitInBackground(this.context, {
      name: 'scim.deletes_held',
      key: planId!,
      target: this.target,
      title: `SCIM ${WHAT[this.resource]} on ${this.target} are held over the hourly limit of ${removalLimit(this.context, this.target)}: plan ${planId!}`,
      ids: { importId: planId! },
      counts: { held: row, limit: removalLimit(this.context, this.target) },
      why: [
        `the identity provider sent more deletes and deactivations this hour than ${removalLimit(this.context, this.target)}; they wait in one plan`,
      ],
      action: `An approver must approve plan ${planId!} (porter approve ${planId!}, or its page in the console) or cancel it; the identity provider is told to retry meanwhile.`,
      page: `imports/${planId!}`,
    });
    return planId!;
  }
}
