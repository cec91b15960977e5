import { describe, expect, it } from 'vitest';
import { comparable } from '../../src/diff/comparable.js';
import { PLANNED_ID } from '../../src/migrate/migration-model.js';
import type { SourceRef } from '../../src/migrate/migration-store.js';
import {
  PLANNED_MARK,
  REFERENCE_FAILED_MARK,
  SOURCE_ID_MARK,
  stageLine,
  type SourceReference,
} from '../../src/migrate/stage-records.js';

/** Group 7 migrated as 70, group 8 failed, user 1 migrated as 100, user 2 is planned. */
const refs: Record<string, SourceRef> = {
  'groups:7': { targetId: '70', key: 'Sales' },
  'groups:8': { failed: 'failed ALREADY_EXISTS', key: 'Taken' },
  'users:1': { targetId: '100', key: 'ada' },
  'users:2': { targetId: PLANNED_ID, key: 'bob' },
};
const lookup = (reference: SourceReference): SourceRef | undefined =>
  refs[`${reference.resource}:${reference.sourceId}`];

describe('stage records', () => {
  it("drop the source's ids and rewrite references to the target's", () => {
    expect(
      stageLine(
        'acls',
        { id: '0_7_X', groupId: 7, name: 'Read', workspaces: ['W'], future: 1, searchFilter: null },
        lookup,
      ),
    ).toEqual({ groupId: '#70', name: 'Read', workspaces: ['W'], [SOURCE_ID_MARK]: '0_7_X' });
    expect(
      stageLine(
        'users',
        { userId: 1, username: 'ada', groups: [7], primaryGroup: 7, type: null },
        lookup,
      ),
    ).toEqual({ username: 'ada', primaryGroup: 70, [SOURCE_ID_MARK]: '1' });
    expect(stageLine('groups', { id: 7, name: 'Sales', users: [1], acls: ['a'] }, lookup)).toEqual({
      name: 'Sales',
      [SOURCE_ID_MARK]: '7',
    });
    expect(stageLine('memberships', { id: 7, name: 'Sales', users: [1] }, lookup)).toEqual({
      name: 'Sales',
      users: ['#100'],
      [SOURCE_ID_MARK]: '7',
    });
  });

  it('a reference that did not migrate, or is not in the bundle, fails the record, naming it', () => {
    const acl = stageLine('acls', { id: 'a', groupId: 8, name: 'Read' }, lookup);
    expect(acl[REFERENCE_FAILED_MARK]).toBe(
      'group "Taken" (source id 8) did not migrate (failed ALREADY_EXISTS)',
    );
    expect(acl.groupId).toBe('name:Taken');
    const members = stageLine('memberships', { id: 7, name: 'Sales', users: [1, 3] }, lookup);
    expect(members[REFERENCE_FAILED_MARK]).toBe('user (source id 3) is not in the bundle');
  });

  it('in a dry run, a record naming one that would be created is planned without a lookup', () => {
    const members = stageLine('memberships', { id: 7, name: 'Sales', users: [1, 2] }, lookup);
    expect(members[PLANNED_MARK]).toBe('update');
    expect(members[REFERENCE_FAILED_MARK]).toBeUndefined();
  });
});

describe('comparable records (the diff)', () => {
  it('leave out ids and the interface quirks', () => {
    expect(
      comparable('users', {
        userId: 5,
        username: 'ada',
        position: 'vertical',
        primaryGroup: 3,
        middleName: '',
        groups: [9, 2],
      }),
    ).toEqual({ id: '5', key: 'ada', fields: { username: 'ada', groups: ['2', '9'] } });
    expect(
      comparable('groups', { id: 1, name: 'G', loadingDockType: 10_000, acls: ['x'] }),
    ).toEqual({ id: '1', key: 'G', fields: { name: 'G', loadingDockType: 1 } });
    expect(
      comparable('acls', { id: 'x', groupId: 4, name: 'R', workspaces: ['W'], forms: ['b', 'a'] }),
    ).toEqual({ id: 'x', key: 'R', groupId: '4', fields: { name: 'R', forms: ['a', 'b'] } });
  });
});
