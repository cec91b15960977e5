/** aclManager: reading ACLs, and planning and applying ACL writes (spec 2.1, 4.1). */
import { aclRecordSchema } from '../admin/schemas.js';
import { Draft } from './draft.js';
import { alreadyExists, badRequest, notFound, unknownReference } from './errors.js';
import { defaultWorkspaceId, makeAclId } from './ids.js';
import type { RequestParams } from './params.js';
import { aclRecord } from './records.js';
import { aclKey, type SandboxStore } from './store.js';
import { makeAcl, type StoredAcl } from './stored.js';
import { parseRecord, requireName, unique, type WritePlanner } from './write.js';

type AclOp = { kind: 'create' | 'update'; acl: StoredAcl };

/**
 * GET aclManager: by id, by groupId, by userId (the ACLs of the user's groups), or all.
 * Filters given together must all match.
 */
export function listAcls(store: SandboxStore, params: RequestParams): Iterable<unknown> {
  const id = params.string('id');
  const groupId = params.integer('groupId');
  const userId = params.integer('userId');
  if (id === undefined && groupId === undefined && userId === undefined) return allAcls(store);
  const userGroups = userId === undefined ? undefined : new Set(store.groupsOfUser(userId));
  let candidates: string[];
  if (id !== undefined) candidates = [id];
  else if (groupId !== undefined) candidates = store.aclIdsOf(groupId);
  else candidates = [...(userGroups ?? [])].flatMap((group) => store.aclIdsOf(group));
  const answer: unknown[] = [];
  for (const aclId of candidates) {
    const acl = store.getAcl(aclId);
    if (!acl) continue;
    if (groupId !== undefined && acl.groupId !== groupId) continue;
    if (userGroups && !userGroups.has(acl.groupId)) continue;
    answer.push(aclRecord(acl));
  }
  return answer;
}

function* allAcls(store: SandboxStore): Generator<unknown> {
  for (const acl of store.allAcls()) yield aclRecord(acl);
}

/** Plans and applies the records of one PUT on aclManager (no id creates, id updates). */
export function aclPlanner(store: SandboxStore): WritePlanner<AclOp> {
  const draft = new Draft<string>({
    keyOf: (id) => {
      const acl = store.getAcl(id);
      return acl && aclKey(acl.groupId, acl.name);
    },
    idOf: (key) => store.aclIdOfKey(key),
  });
  /** ACLs created per group in this request, to number new ids. */
  const createdPerGroup = new Map<number, number>();

  return {
    plan(raw) {
      const record = parseRecord(aclRecordSchema, raw);
      const name = requireName(record.name, 'name');
      let id: string;
      let groupId: number;
      let kind: 'create' | 'update';
      if (record.id !== undefined) {
        kind = 'update';
        id = record.id;
        const existing = draft.has(id) ? store.getAcl(id) : undefined;
        if (!existing) throw notFound(`no ACL with id "${id}"`);
        groupId = existing.groupId;
        if (record.groupId !== undefined && record.groupId !== groupId) {
          throw badRequest(
            `groupId of ACL "${id}" is ${groupId} and cannot change (the id names it)`,
          );
        }
      } else {
        kind = 'create';
        if (record.groupId === undefined) throw badRequest('groupId is required to create an ACL');
        groupId = record.groupId;
        if (!store.getGroup(groupId)) throw unknownReference(`group ${groupId} does not exist`);
        const created = createdPerGroup.get(groupId) ?? 0;
        createdPerGroup.set(groupId, created + 1);
        id = makeAclId(store.aclCountOf(groupId) + created, groupId);
      }
      const holder = draft.idOf(aclKey(groupId, name));
      if (holder !== undefined && holder !== id) {
        throw alreadyExists(
          `an ACL named "${name}" already exists in group ${groupId} (id "${holder}")`,
        );
      }
      const workspaces = unique(record.workspaces ?? []);
      // The spec saw an empty list come back with one workspace; the sandbox uses the group's default.
      if (workspaces.length === 0) workspaces.push(defaultWorkspaceId(groupId));
      const acl = makeAcl({
        id,
        name,
        groupId,
        workspaces,
        description: record.description,
        hidden: record.hidden,
        revokedPermissions: record.revokedPermissions && unique(record.revokedPermissions),
        rootPath: record.rootPath,
        searchFilter: record.searchFilter,
        forms: record.forms && unique(record.forms),
        uploadForm: record.uploadForm,
      });
      draft.put(id, aclKey(groupId, name));
      return { kind, acl };
    },
    apply(op) {
      store.putAcl(op.acl);
      store.stats.applied.acls[op.kind === 'create' ? 'created' : 'updated']++;
      return aclRecord(op.acl);
    },
  };
}
