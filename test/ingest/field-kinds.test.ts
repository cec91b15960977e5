import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RESOURCES, RESOURCE_NAMES } from '../../src/admin/resources.js';
import { fieldKinds, kindOfSchema } from '../../src/ingest/field-kinds.js';

describe('field kinds', () => {
  it('are derived from the zod schemas of the spec', () => {
    expect(kindOfSchema(z.string())).toBe('string');
    expect(kindOfSchema(z.string().nullable())).toBe('nullableString');
    expect(kindOfSchema(z.boolean())).toBe('boolean');
    expect(kindOfSchema(z.number().int())).toBe('integer');
    expect(kindOfSchema(z.array(z.string()))).toBe('stringList');
    expect(kindOfSchema(z.array(z.number().int()))).toBe('integerList');
    expect(kindOfSchema(z.record(z.string(), z.unknown()))).toBe('object');
    expect(() => kindOfSchema(z.number())).toThrow(/no field kind/);
  });

  it('cover every field of every resource', () => {
    for (const resource of RESOURCE_NAMES) {
      expect([...fieldKinds(resource).keys()]).toEqual(Object.keys(RESOURCES[resource].fields));
    }
  });

  it('match the spec tables, with references where names may stand for ids', () => {
    expect(Object.fromEntries(fieldKinds('users'))).toMatchObject({
      userId: 'integer',
      username: 'string',
      type: 'string',
      primaryGroup: 'integer',
      groups: 'referenceList',
      substitutionMap: 'object',
    });
    expect(Object.fromEntries(fieldKinds('groups'))).toMatchObject({
      id: 'integer',
      hidden: 'boolean',
      priority: 'integer',
      loadingDockType: 'integer',
      acls: 'stringList',
      users: 'referenceList',
    });
    expect(Object.fromEntries(fieldKinds('acls'))).toMatchObject({
      id: 'string',
      groupId: 'reference',
      revokedPermissions: 'stringList',
      workspaces: 'stringList',
      searchFilter: 'nullableString',
      forms: 'stringList',
    });
  });
});
