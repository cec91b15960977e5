/**
 * PATCH as identity providers send it: each Entra ID form from its "SCIM 2.0 protocol
 * compliance" page, before and after the `aadOptscim062020` flag, gives the same resource.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/scim/attribute-path.js';
import { canonicalResource } from '../../src/scim/canonical.js';
import { applyPatch, readPatchOperations } from '../../src/scim/patch.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

function user(): JsonObject {
  return canonicalResource('User', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id: '5',
    userName: 'Test_User_dfeef4c5',
    active: true,
    name: { givenName: 'Given', familyName: 'Family' },
    emails: [{ primary: true, type: 'work', value: 'Test_User_1@testuser.com' }],
  });
}

function group(...members: string[]): JsonObject {
  return canonicalResource('Group', {
    id: '9',
    displayName: 'Sales',
    members: members.map((value) => ({ value })),
  });
}

function patch(kind: 'User' | 'Group', resource: JsonObject, operations: unknown[]): JsonObject {
  return applyPatch(
    kind,
    resource,
    readPatchOperations({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: operations,
    }),
  );
}

describe('PATCH, Entra before and after aadOptscim062020', () => {
  it('disable user: "False" with capitalised Replace, or false', () => {
    const before = patch('User', user(), [{ op: 'Replace', path: 'active', value: 'False' }]);
    const after = patch('User', user(), [{ op: 'replace', path: 'active', value: false }]);
    expect(before.active).toBe(false);
    expect(after).toEqual(before);
  });

  it('add an attribute: with a path, or as a value object without one', () => {
    const before = patch('User', user(), [{ op: 'Add', path: 'nickName', value: 'Babs' }]);
    const after = patch('User', user(), [{ op: 'add', value: { nickName: 'Babs' } }]);
    expect(before.nickName).toBe('Babs');
    expect(after).toEqual(before);
  });

  it('replace several attributes: one op per path, or one op without a path', () => {
    const before = patch('User', user(), [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Sales' },
      { op: 'Add', path: `${ENTERPRISE}:manager`, value: '7' },
    ]);
    const after = patch('User', user(), [
      {
        op: 'replace',
        value: {
          'emails[type eq "work"].value': 'updatedEmail@microsoft.com',
          'name.familyName': 'updatedFamilyName',
          [`${ENTERPRISE}:department`]: 'Sales',
          [ENTERPRISE]: { manager: { value: '7' } },
        },
      },
    ]);
    expect(before.emails).toEqual([
      { primary: true, type: 'work', value: 'updatedEmail@microsoft.com' },
    ]);
    expect(before.name).toEqual({ givenName: 'Given', familyName: 'updatedFamilyName' });
    expect(before[ENTERPRISE]).toEqual({ department: 'Sales', manager: { value: '7' } });
    expect(before.schemas).toContain(ENTERPRISE);
    expect(after).toEqual(before);
  });

  it('add members: Add or add, as a list', () => {
    const before = patch('Group', group('1'), [
      { op: 'Add', path: 'members', value: [{ $ref: null, value: '2' }] },
    ]);
    const after = patch('Group', group('1'), [
      { op: 'add', path: 'members', value: [{ value: '2' }] },
    ]);
    expect((before.members as JsonObject[]).map((m) => m.value)).toEqual(['1', '2']);
    expect((after.members as JsonObject[]).map((m) => m.value)).toEqual(['1', '2']);
  });

  it('remove members: a value list under "members", or a path filter', () => {
    const before = patch('Group', group('1', '2', '3'), [
      { op: 'Remove', path: 'members', value: [{ $ref: null, value: '2' }, { value: '3' }] },
    ]);
    const after = patch('Group', group('1', '2', '3'), [
      { op: 'remove', path: 'members[value eq "2"]' },
      { op: 'REMOVE', path: 'members[value eq "3"]' },
    ]);
    expect(before.members).toEqual([{ value: '1' }]);
    expect(after).toEqual(before);
  });

  it('remove every member, replace the members, rename the group', () => {
    expect(
      patch('Group', group('1', '2'), [{ op: 'remove', path: 'members' }]).members,
    ).toBeUndefined();
    const replaced = patch('Group', group('1', '2'), [
      { op: 'replace', path: 'members', value: [{ value: '3' }] },
      { op: 'Replace', path: 'displayName', value: 'Sales EMEA' },
    ]);
    expect(replaced.members).toEqual([{ value: '3' }]);
    expect(replaced.displayName).toBe('Sales EMEA');
  });

  it('a member given as bare text is its value; adding one twice keeps one', () => {
    const added = patch('Group', group('1'), [
      { op: 'add', path: 'members', value: 'string id 1' },
      { op: 'add', path: 'members', value: [{ value: '1', display: 'Ann' }] },
    ]);
    expect(added.members).toEqual([{ value: '1', display: 'Ann' }, { value: 'string id 1' }]);
  });

  it('Okta deactivates with a replace without a path', () => {
    expect(patch('User', user(), [{ op: 'replace', value: { active: false } }]).active).toBe(false);
  });

  it('refuses an unknown op, a remove without a path, a read-only attribute, an unclosed filter', () => {
    const cases: Array<[unknown[], string]> = [
      [[{ op: 'merge', path: 'title', value: 'x' }], 'invalidSyntax'],
      [[{ op: 'remove' }], 'noTarget'],
      [[{ op: 'replace', path: 'id', value: '6' }], 'mutability'],
      [[{ op: 'remove', path: 'members[value eq "2"' }], 'invalidPath'],
      [[{ op: 'replace', path: 'active', value: 'maybe' }], 'invalidValue'],
    ];
    for (const [operations, scimType] of cases) {
      const kind = JSON.stringify(operations).includes('members') ? 'Group' : 'User';
      expect(() => patch(kind, kind === 'Group' ? group() : user(), operations), scimType).toThrow(
        expect.objectContaining({ details: { scimType } }),
      );
    }
    expect(() => readPatchOperations({ Operations: [] })).toThrow(
      expect.objectContaining({ details: { scimType: 'invalidSyntax' } }),
    );
  });

  it('attributes no schema defines are left out; the input is not changed', () => {
    const original = user();
    const patched = patch('User', original, [{ op: 'add', path: 'favouriteColour', value: 'red' }]);
    expect(patched).toEqual(original);
    const renamed = patch('User', original, [{ op: 'replace', path: 'USERNAME', value: 'ryan3' }]);
    expect(renamed.userName).toBe('ryan3');
    expect(original.userName).toBe('Test_User_dfeef4c5');
  });
});
