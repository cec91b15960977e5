/**
 * toPortable: spec fields in spec order whatever order the record came in, unknown fields left
 * out with a warning, group ids named.
 */
import { describe, expect, it } from 'vitest';
import { toPortable, type PortableOptions } from '../../src/export/portable-record.js';

function options(warnings: string[] = []): PortableOptions {
  const names = new Map([[3, 'Editors']]);
  return { groupName: (id) => names.get(id), warn: (message) => warnings.push(message) };
}

describe('toPortable', () => {
  it('gives the same record, keys in spec order, however the answer ordered them', () => {
    const inOrder = { userId: 1, username: 'ann', email: 'a@x', groups: [3] };
    const shuffled = { groups: [3], email: 'a@x', userId: 1, username: 'ann' };
    const expected = { userId: 1, username: 'ann', email: 'a@x', groups: ['Editors'] };
    for (const record of [inOrder, shuffled]) {
      const portable = toPortable('users', record, options());
      expect(portable).toEqual(expected);
      expect(Object.keys(portable)).toEqual(Object.keys(expected));
    }
    expect(inOrder.groups).toEqual([3]);
  });

  it('leaves out a field the spec does not know, and says so', () => {
    const warnings: string[] = [];
    const portable = toPortable('users', { userId: 1, nickname: 'a' }, options(warnings));
    expect(portable).toEqual({ userId: 1 });
    expect(warnings).toEqual(['users: field "nickname" is not in the specification; left out']);
  });

  it("leaves out a group's members, which travel with the users", () => {
    expect(toPortable('groups', { id: 3, name: 'Editors', users: [1] }, options())).toEqual({
      id: 3,
      name: 'Editors',
    });
  });

  it('writes a name an import would read as an id with the name: prefix, without a warning', () => {
    const warnings: string[] = [];
    const names = new Map([
      [3, '42'],
      [4, '#7'],
      [5, 'name:x'],
      [6, 'Sales'],
    ]);
    const portable = toPortable(
      'users',
      { userId: 1, groups: [3, 4, 5, 6] },
      { groupName: (id) => names.get(id), warn: (message) => warnings.push(message) },
    );
    expect(portable).toEqual({ userId: 1, groups: ['name:42', 'name:#7', 'name:name:x', 'Sales'] });
    expect(warnings).toEqual([]);
  });
});
