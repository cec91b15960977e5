import { describe, expect, it } from 'vitest';
import { guardUserChange, isAdminType } from '../../src/plan/admin-guard.js';

describe('privilege guard', () => {
  it.each([
    'Global Administrator',
    'global administrator',
    ' Global  Administrator ',
    'GROUP ADMINISTRATOR',
    'Group\tAdministrator',
    'Ｇlobal Administrator', // full-width G, folded by NFKC
    'Site Admin',
  ])('treats %j as an administrator type', (type) => {
    expect(isAdminType(type)).toBe(true);
    expect(guardUserChange('create', { type }, undefined, false)).toMatchObject({ allowed: false });
    expect(guardUserChange('create', { type }, undefined, true)).toMatchObject({ allowed: true });
    expect(guardUserChange('delete', {}, { type }, false)).toMatchObject({ allowed: false });
  });

  it('lets ordinary types through on create, and refuses any change of type on update', () => {
    expect(isAdminType('General User')).toBe(false);
    expect(guardUserChange('create', { type: 'General User' }, undefined, false).allowed).toBe(
      true,
    );
    expect(guardUserChange('create', {}, undefined, false).allowed).toBe(true);
    const current = { type: 'General User' };
    expect(guardUserChange('update', { type: 'General User' }, current, false).allowed).toBe(true);
    expect(guardUserChange('update', {}, current, false).allowed).toBe(true);
    const promote = guardUserChange('update', { type: 'global administrator' }, current, false);
    expect(promote).toMatchObject({ allowed: false });
    expect(promote.reason).toMatch(/--allow-admin/);
  });
});
