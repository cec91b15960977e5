/**
 * The SCIM use cases of one target (docs/scim.md): reading, creating, replacing, patching and
 * deleting users and groups of the DAM, over the target's admin client (its rate cap and 429
 * back-off). The protocol (filters, PATCH, paging, schemas) is src/scim/; this is where it meets
 * the DAM. A user's SCIM `id` is its DAM userId, a group's its DAM id; `externalId` is kept in
 * the DAM record (anchor-placement.ts); `active: false` locks the user, it is never deleted.
 * This file holds the users' writes; the reads are scim-target-base.ts, the groups' writes
 * scim-groups.ts.
 */
import type { AdminClient } from '../admin/client.js';
import type { UserRecord } from '../admin/schemas.js';
import { PorterError } from '../errors/porter-error.js';
import type { Mapping } from '../ingest/mapping.js';
import { MappingEvaluator } from '../mapping/evaluator.js';
import { readMappingFile } from '../mapping/read-mapping-file.js';
import { readFile } from 'node:fs/promises';
import { guardUserChange } from '../plan/admin-guard.js';
import { userAnchor, withUserAnchor } from '../scim/anchor-placement.js';
import type { JsonObject } from '../scim/attribute-path.js';
import { canonicalResource } from '../scim/canonical.js';
import { userResource } from '../scim/dam-views.js';
import { defaultScimUserMapping } from '../scim/default-mapping.js';
import { checkIfMatch } from '../scim/etag.js';
import { applyPatch, readPatchOperations } from '../scim/patch.js';
import { scimInvalid } from '../scim/scim-error.js';
import type { PorterContext } from './context.js';
import {
  nameKey,
  nameTaken,
  userCreateGatherer,
  type GatherOptions,
  type UserCreateGatherer,
} from './scim-gather.js';
import { userUpdateGatherer, type UserUpdateGatherer } from './scim-update-gather.js';
import { ScimRemovalGuard } from './scim-hold.js';
import { ScimJournal } from './scim-journal.js';
import { ScimGroupWrites } from './scim-groups.js';
import type { ScimWritten } from './scim-target-base.js';

const GENERAL_USER = 'General User';

/** One evaluator per mapping, per process: the mapping is read once. */
const evaluators = new WeakMap<PorterContext, Promise<MappingEvaluator>>();

async function userEvaluator(context: PorterContext): Promise<MappingEvaluator> {
  let evaluator = evaluators.get(context);
  if (!evaluator) {
    evaluator = (async () => {
      const file = context.env.PORTER_SCIM_MAPPING_FILE;
      const mapping: Mapping = file
        ? await readMappingFile(file, JSON.parse(await readFile(file, 'utf8')) as unknown, 'users')
        : defaultScimUserMapping();
      return new MappingEvaluator(mapping, 'username');
    })();
    evaluators.set(context, evaluator);
  }
  return evaluator;
}

/** Stops the mapping's expression thread, if one was started. */
export async function closeScim(context: PorterContext): Promise<void> {
  const evaluator = evaluators.get(context);
  evaluators.delete(context);
  if (evaluator) await (await evaluator).close();
}

export type { ScimQuery, ScimWritten } from './scim-target-base.js';

export class ScimTarget extends ScimGroupWrites {
  private readonly removals: ScimRemovalGuard;
  private readonly journal: ScimJournal;

  /** `base`: the target's SCIM URL, for `location` and `$ref`. */
  constructor(context: PorterContext, target: string, client: AdminClient, base: string) {
    super(context, target, client, base);
    this.removals = new ScimRemovalGuard(context, target);
    this.journal = new ScimJournal(context, target);
  }

  private gathering(): GatherOptions {
    return {
      windowMs: this.context.env.PORTER_SCIM_WINDOW_MS,
      maxBatch: this.context.env.PORTER_SCIM_MAX_BATCH,
    };
  }

  private creates(): UserCreateGatherer {
    return userCreateGatherer(this.client, this.gathering());
  }

  private updates(): UserUpdateGatherer {
    return userUpdateGatherer(this.client, this.gathering());
  }

  /** The DAM fields the mapping gives for a SCIM user; PORTER_SCIM_INVALID when it fails. */
  private async mapUser(resource: JsonObject): Promise<Record<string, unknown>> {
    const evaluator = await userEvaluator(this.context);
    const outcome = await evaluator.evaluate(resource, 1);
    if (outcome.kind === 'failed') {
      throw scimInvalid(
        'invalidValue',
        `the mapping of ${outcome.field} failed: ${outcome.message}`,
      );
    }
    if (outcome.kind === 'skip')
      throw scimInvalid('invalidValue', `the mapping skips this user: ${outcome.reason}`);
    return outcome.values;
  }

  private requireUserName(resource: JsonObject): string {
    const name = resource.userName;
    if (typeof name !== 'string' || name.trim() === '') {
      throw scimInvalid('invalidValue', 'userName is required');
    }
    return name;
  }

  /** PORTER_SCIM_UNIQUENESS when another user holds the name or a look-alike of it. */
  private async checkUserNameFree(name: string, self?: number): Promise<void> {
    const users = await this.client.listUsers();
    const key = nameKey(name);
    const holder = users.find((user) => user.userId !== self && nameKey(user.username) === key);
    if (holder) throw nameTaken(name, `user ${holder.userId} ("${holder.username}")`);
  }

  /**
   * Creates a user: gathered with the creates arriving meanwhile into one call (scim-gather.ts,
   * which checks the name), and answered from the record sent and the one the server returned.
   */
  async createUser(body: unknown): Promise<ScimWritten> {
    const resource = canonicalResource('User', body, { writable: true });
    const name = this.requireUserName(resource);
    const fields = await this.mapUser(resource);
    const anchor = typeof resource.externalId === 'string' ? resource.externalId : undefined;
    const record = {
      ...fields,
      username: name,
      type: GENERAL_USER,
      ...(anchor !== undefined ? { substitutionMap: withUserAnchor({}, anchor) } : {}),
    } as UserRecord;
    const created = await this.creates().create(record);
    const userId = String(created.userId);
    // what the server holds: the fields sent, as it returned them (a new user is in no group)
    const held = { ...record, ...created } as UserRecord;
    // the journal keeps the changes of one moment in one go: asked before anything is awaited
    const [shadow] = await Promise.all([
      this.shadows.put(this.target, 'User', userId, resource),
      this.journal.record({ action: 'create', id: created.userId!, key: name, written: held }),
    ]);
    return this.written('User', userResource(held, shadow, new Map(), this.base));
  }

  /** Writes `resource` over the DAM user: the PUT of SCIM, and the end of a PATCH. */
  private async writeUser(current: UserRecord, resource: JsonObject): Promise<ScimWritten> {
    const name = this.requireUserName(resource);
    if (current.username !== name) await this.checkUserNameFree(name, current.userId);
    const fields = await this.mapUser(resource);
    // a mapping that computes the DAM type never changes a user's type through SCIM: no
    // promotion to an administrator, no demotion of one (the imports' admin guard)
    const verdict = guardUserChange('update', fields, current, false);
    if (!verdict.allowed) {
      throw new PorterError(
        'PORTER_ADMIN_GUARD',
        `user ${current.userId} ("${current.username}"): the SCIM mapping ${verdict.reason!.replace(/; start the import.*$/, '')}; SCIM never changes a user's type`,
      );
    }
    const evaluator = await userEvaluator(this.context);
    // a PUT of the admin interface overwrites: the DAM fields the mapping does not compute
    // are carried over, those it computes but gave nothing for are cleared
    const record: Record<string, unknown> = { ...current };
    for (const field of evaluator.computed)
      record[field] = typeof current[field as keyof UserRecord] === 'string' ? '' : undefined;
    Object.assign(record, fields, { userId: current.userId, username: name });
    const anchor =
      typeof resource.externalId === 'string' ? resource.externalId : userAnchor(current);
    record.substitutionMap = withUserAnchor(
      current.substitutionMap as Record<string, unknown> | undefined,
      anchor,
    );
    if (
      record.status === 'Locked' &&
      current.status !== 'Locked' &&
      (current.type ?? GENERAL_USER) !== GENERAL_USER
    ) {
      throw new PorterError(
        'PORTER_ADMIN_GUARD',
        `user ${current.userId} ("${current.username}") is a ${current.type}: SCIM never deactivates one`,
      );
    }
    for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
    const change = {
      id: current.userId!,
      key: name,
      before: current,
      written: record as UserRecord & { userId: number },
    };
    const removal = { kind: 'lock' as const, id: current.userId!, name: current.username ?? name };
    if (record.status === 'Locked' && current.status !== 'Locked') {
      // a deactivation: within the target's hourly budget, else held (scim-hold.ts)
      const outcome = await this.removals.guard(removal, () =>
        this.updates().update(change.written),
      );
      if (!outcome.applied) return this.written('User', await this.userView(current));
      await this.journal.record({ ...change, action: 'lock' });
    } else if (
      record.status === 'Locked' &&
      (await this.removals.released(current.userId!, 'lock'))
    ) {
      // the provider's retry of a deactivation released from a hold: answered as it is now
      return this.written('User', await this.userView(current));
    } else {
      // gathered with the updates arriving meanwhile; answered from the record sent and the
      // one the server returned, as a create is
      const updated = await this.updates().update(
        change.written as UserRecord & { userId: number },
      );
      // the old name is free again for a create
      if (current.username !== name) this.creates().forgetNames();
      const [shadow] = await Promise.all([
        this.shadows.put(this.target, 'User', String(current.userId), resource),
        this.journal.record({ ...change, action: 'update' }),
      ]);
      const groupNames =
        (updated.groups ?? []).length > 0 ? await this.groupNames() : new Map<number, string>();
      return this.written('User', userResource(updated, shadow, groupNames, this.base));
    }
    await this.shadows.put(this.target, 'User', String(current.userId), resource);
    return this.written('User', await this.userView(await this.damUser(String(current.userId))));
  }

  replaceUser(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    return this.serially('User', id, () => this.replaceUserNow(id, body, ifMatch));
  }

  private async replaceUserNow(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    const current = await this.damUser(id);
    checkIfMatch(ifMatch, String(((await this.userView(current)).meta as JsonObject).version));
    return this.writeUser(current, canonicalResource('User', body, { writable: true }));
  }

  patchUser(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    return this.serially('User', id, () => this.patchUserNow(id, body, ifMatch));
  }

  private async patchUserNow(id: string, body: unknown, ifMatch?: string): Promise<ScimWritten> {
    const operations = readPatchOperations(body);
    const current = await this.damUser(id);
    const view = await this.userView(current);
    checkIfMatch(ifMatch, String((view.meta as JsonObject).version));
    const patched = applyPatch('User', view, operations);
    return this.writeUser(current, canonicalResource('User', patched, { writable: true }));
  }

  deleteUser(id: string, ifMatch?: string): Promise<void> {
    return this.serially('User', id, () => this.deleteUserNow(id, ifMatch));
  }

  private async deleteUserNow(id: string, ifMatch?: string): Promise<void> {
    let current: UserRecord;
    try {
      current = await this.damUser(id);
    } catch (error) {
      // the provider's retry of a delete released from a hold: done
      if (/^\d{1,15}$/.test(id) && (await this.removals.released(Number(id), 'delete'))) return;
      throw error;
    }
    if (ifMatch !== undefined)
      checkIfMatch(ifMatch, String(((await this.userView(current)).meta as JsonObject).version));
    if ((current.type ?? GENERAL_USER) !== GENERAL_USER) {
      throw new PorterError(
        'PORTER_ADMIN_GUARD',
        `user ${current.userId} ("${current.username}") is a ${current.type}: SCIM never deletes one`,
      );
    }
    // within the target's hourly budget of deletes, else held (scim-hold.ts)
    await this.removals.guard(
      { kind: 'delete', id: current.userId!, name: current.username ?? '' },
      async () => {
        await this.client.deleteUsers([{ userId: current.userId! }]);
        this.creates().forgetNames();
        await this.shadows.remove(this.target, 'User', id);
        await this.journal.record({
          action: 'delete',
          id: current.userId!,
          key: current.username ?? '',
          before: current,
        });
      },
    );
  }
}
