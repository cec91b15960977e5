/**
 * How a bundle record becomes a record of a stage's import: its instance's ids dropped, its
 * references rewritten through the id map to the target's ids (`#id`, which the import never
 * reads as a name), and, when a reference did not migrate, a decided failure instead of a write.
 * Plain functions: the stage runner feeds them the map entries the records name.
 */
import type { ResourceName } from '../admin/resources.js';
import { fieldKinds } from '../ingest/field-kinds.js';
import { PLANNED_ID, type StageName } from './migration-model.js';
import type { SourceRef } from './migration-store.js';

/** A reference a record makes to another record of the bundle. */
export interface SourceReference {
  resource: 'groups' | 'users';
  sourceId: string;
  field: string;
}

/** Marks of a line the migration decided itself (the import ignores `porter_*` keys). */
export const REFERENCE_FAILED_MARK = 'porter_referenceFailed';
export const PLANNED_MARK = 'porter_plannedAction';
export const SOURCE_ID_MARK = 'porter_sourceId';

/** The id a record has in its own instance, as text. */
export function sourceIdOf(resource: ResourceName, record: Record<string, unknown>): string {
  return String(resource === 'users' ? record.userId : record.id);
}

/** An ACL's natural key for people: its group's name and its own. */
export function aclKeyText(groupName: string, aclName: string): string {
  return `${groupName} / ${aclName}`;
}

/** The records a stage's record names. */
export function referencesOf(stage: StageName, record: Record<string, unknown>): SourceReference[] {
  switch (stage) {
    case 'groups':
      return [];
    case 'acls':
      return [{ resource: 'groups', sourceId: String(record.groupId), field: 'groupId' }];
    case 'users':
      return record.primaryGroup === undefined || record.primaryGroup === null
        ? []
        : [{ resource: 'groups', sourceId: String(record.primaryGroup), field: 'primaryGroup' }];
    case 'memberships': {
      const members = Array.isArray(record.users) ? record.users : [];
      return [
        { resource: 'groups', sourceId: String(record.id), field: 'name' },
        ...members.map((member) => ({
          resource: 'users' as const,
          sourceId: String(member),
          field: 'users',
        })),
      ];
    }
  }
}

/** Fields a stage never sends: ids of the source instance, and what a later stage sets. */
const LEFT_OUT: { readonly [S in StageName]: ReadonlySet<string> } = {
  groups: new Set(['id', 'users', 'acls']),
  acls: new Set(['id']),
  users: new Set(['userId', 'groups']),
  memberships: new Set(),
};

export type RefLookup = (reference: SourceReference) => SourceRef | undefined;

/** The import line for a record, and what the migration decided about it, if anything. */
export function stageLine(
  stage: StageName,
  record: Record<string, unknown>,
  lookup: RefLookup,
): Record<string, unknown> {
  const resource: ResourceName = stage === 'memberships' ? 'groups' : stage;
  const sourceId = sourceIdOf(resource, record);
  const line: Record<string, unknown> = {};
  if (stage === 'memberships') {
    line.name = record.name;
  } else {
    const kinds = fieldKinds(resource);
    for (const [field, value] of Object.entries(record)) {
      // fields the specification does not know would stop the import; nulls mean "not set"
      if (!kinds.has(field) || LEFT_OUT[stage].has(field) || value === null) continue;
      line[field] = value;
    }
  }
  const failed: string[] = [];
  let planned = false;
  const members: string[] = [];
  for (const reference of referencesOf(stage, record)) {
    const ref = lookup(reference);
    const what = describeReference(reference, ref);
    let target: string | undefined;
    if (ref?.targetId === PLANNED_ID) planned = true;
    else if (ref?.targetId !== undefined) target = ref.targetId;
    else if (ref?.failed) failed.push(`${what} did not migrate (${ref.failed})`);
    else if (ref?.key !== undefined)
      failed.push(`${what} did not migrate (its stage did not finish)`);
    else failed.push(`${what} is not in the bundle`);
    const name = ref?.key ?? reference.sourceId;
    if (reference.field === 'groupId') line.groupId = target ? `#${target}` : `name:${name}`;
    else if (reference.field === 'primaryGroup') {
      if (target) line.primaryGroup = Number(target);
      else delete line.primaryGroup;
    } else if (reference.field === 'users') members.push(target ? `#${target}` : `name:${name}`);
  }
  if (stage === 'memberships') line.users = members;
  line[SOURCE_ID_MARK] = sourceId;
  if (failed.length > 0) {
    const shown = failed.slice(0, 5).join('; ');
    const more = failed.length > 5 ? `; and ${failed.length - 5} more` : '';
    line[REFERENCE_FAILED_MARK] = `${shown}${more}`;
  } else if (planned) {
    // a dry run: a record naming one that would be created cannot be planned against the target
    line[PLANNED_MARK] =
      stage === 'memberships' ? (members.length > 0 ? 'update' : 'unchanged') : 'create';
  }
  return line;
}

function describeReference(reference: SourceReference, ref: SourceRef | undefined): string {
  const noun = reference.resource === 'groups' ? 'group' : 'user';
  const name = ref?.key === undefined ? '' : ` ${JSON.stringify(ref.key)}`;
  return `${noun}${name} (source id ${reference.sourceId})`;
}
