/**
 * Names for the ids in a change of a users' `groups` or a group's `users`, so a plan reads
 * "groups: +Sales −Temps" rather than a list of numbers.
 */
import type { ResourceName } from '../admin/resources.js';
import type { FieldChange } from '../model/import.js';
import type { DirectoryView } from './directory-view.js';

const ID_LIST_FIELD: Partial<Record<ResourceName, string>> = { users: 'groups', groups: 'users' };

/** Adds `names` to the change of an id list; other changes are returned as they are. */
export async function nameIds(
  resource: ResourceName,
  changes: FieldChange[],
  view: DirectoryView,
): Promise<FieldChange[]> {
  const listField = ID_LIST_FIELD[resource];
  return Promise.all(
    changes.map(async (change) => {
      if (change.field !== listField) return change;
      const ids = new Set<number>();
      for (const list of [change.from, change.to]) {
        if (Array.isArray(list)) for (const id of list) if (typeof id === 'number') ids.add(id);
      }
      const names: Record<string, string> = {};
      for (const id of ids) {
        const found =
          resource === 'users'
            ? (await view.groupById(id))?.name
            : (await view.userById(id))?.username;
        if (typeof found === 'string') names[String(id)] = found;
      }
      return { ...change, names };
    }),
  );
}
