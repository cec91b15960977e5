import { describe, expect, it } from 'vitest';
import { guardUserChange, isOrdinaryType } from '../../src/plan/admin-guard.js';

describe('privilege guard', () => {
  it.each([
    'Global Administrator',
    'global administrator',
    'GROUP ADMINISTRATOR',
    'Ｇlobal Administrator', // full-width G, folded by NFKC
    'Site Admin',
    'Global Admіnistrator', // Cyrillic і: not folded by NFKC, still not the ordinary type
    'Superuser',
    'Power User',
    'Gеneral User', // Cyrillic е: looks ordinary, is not
    'General\u200bUser', // zero-width space
    'General Users',
    '',
  ])('refuses %j without --allow-admin: only "General User" is ordinary', (type) => {
    expect(isOrdinaryType(type)).toBe(false);
    const create = guardUserChange('create', { type }, undefined, false);
    expect(create).toMatchObject({ allowed: false });
    expect(create.reason).toMatch(/only "General User"/);
    expect(guardUserChange('create', { type }, undefined, true)).toMatchObject({ allowed: true });
    const current = { type: 'General User' };
    expect(guardUserChange('update', { type }, current, false)).toMatchObject({ allowed: false });
    expect(guardUserChange('update', { type }, current, true)).toMatchObject({ allowed: true });
    expect(guardUserChange('delete', {}, { type }, false)).toMatchObject({ allowed: false });
    expect(guardUserChange('delete', {}, { type }, true)).toMatchObject({ allowed: true });
  });

  it.each(['General User', 'general user', ' General  User ', 'GENERAL\tUSER', 'Ｇeneral User'])(
    'takes %j as the ordinary type (NFKC, trimmed, spaces collapsed, any case)',
    (type) => {
      expect(isOrdinaryType(type)).toBe(true);
      expect(guardUserChange('create', { type }, undefined, false).allowed).toBe(true);
      expect(guardUserChange('delete', {}, { type }, false).allowed).toBe(true);
    },
  );

  it('a create without a type gets the default and passes; a type that is not text does not', () => {
    expect(guardUserChange('create', {}, undefined, false).allowed).toBe(true);
    expect(guardUserChange('create', { type: 7 }, undefined, false).allowed).toBe(false);
  });

  it('an update may leave or restate the type, never change it; a delete of an unknown type is refused', () => {
    const current = { type: 'General User' };
    expect(guardUserChange('update', { type: 'General User' }, current, false).allowed).toBe(true);
    expect(guardUserChange('update', {}, current, false).allowed).toBe(true);
    const admin = { type: 'Global Administrator' };
    expect(guardUserChange('update', { email: 'a@example.com' }, admin, false).allowed).toBe(true);
    expect(guardUserChange('update', { type: 'Global Administrator' }, admin, false).allowed).toBe(
      true,
    );
    const demote = guardUserChange('update', { type: 'General User' }, admin, false);
    expect(demote).toMatchObject({ allowed: false });
    expect(demote.reason).toMatch(/--allow-admin/);
    expect(guardUserChange('delete', {}, { type: null }, false).allowed).toBe(false);
    expect(guardUserChange('delete', {}, {}, false).allowed).toBe(false);
  });
});
