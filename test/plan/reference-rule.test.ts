import { describe, expect, it } from 'vitest';
import { decideReference, nameReference, referenceLookups } from '../../src/plan/reference-rule.js';

const named2 = { id: 4, name: '2' };
const id2 = { id: 2, name: 'Sales' };

describe('how a reference is read', () => {
  it('#digits is always an id, name: always a name, a bare number either', () => {
    expect(referenceLookups('#4')).toEqual({ id: 4 });
    expect(referenceLookups('name:#4')).toEqual({ name: '#4' });
    expect(referenceLookups('name:2')).toEqual({ name: '2' });
    expect(referenceLookups(2)).toEqual({ name: '2', id: 2 });
    expect(referenceLookups('2')).toEqual({ name: '2', id: 2 });
    expect(referenceLookups('Sales')).toEqual({ name: 'Sales' });
    expect(referenceLookups('#Sales')).toEqual({ name: '#Sales' });
    expect(referenceLookups('#99999999999999999999')).toEqual({});
  });

  it('a bare number that is the name of one group and the id of another is ambiguous, naming both', () => {
    const decision = decideReference('group', 2, named2, id2);
    expect(decision.kind).toBe('ambiguous');
    if (decision.kind !== 'ambiguous') return;
    expect(decision.message).toMatch(/group "2" has id 4/);
    expect(decision.message).toMatch(/group id 2 is "Sales"/);
    expect(decision.message).toMatch(/write #4 or #2/);
    expect(
      decideReference('user', '17', { id: 9, name: '17' }, { id: 17, name: 'jdoe' }).kind,
    ).toBe('ambiguous');
  });

  it('a bare number is the named record when a record has that name, else the id (unchecked)', () => {
    expect(decideReference('group', 2, named2, undefined)).toEqual({ kind: 'resolved', id: 4 });
    expect(decideReference('group', 4, { id: 4, name: '4' }, { id: 4, name: '4' })).toEqual({
      kind: 'resolved',
      id: 4,
    });
    expect(decideReference('group', 2, undefined, id2)).toEqual({ kind: 'resolved', id: 2 });
    expect(decideReference('group', 987654, undefined, undefined)).toEqual({
      kind: 'resolved',
      id: 987654,
    });
  });

  it('an explicit id or name settles it', () => {
    expect(decideReference('group', '#2', named2, id2)).toEqual({ kind: 'resolved', id: 2 });
    expect(decideReference('group', '#4', undefined, undefined)).toEqual({
      kind: 'resolved',
      id: 4,
    });
    expect(decideReference('group', 'name:2', named2, undefined)).toEqual({
      kind: 'resolved',
      id: 4,
    });
    expect(decideReference('group', 'name:2', undefined, id2)).toMatchObject({
      kind: 'unresolved',
      message: 'group "2" does not exist',
    });
    expect(decideReference('user', 'nobody', undefined, undefined)).toMatchObject({
      kind: 'unresolved',
      message: 'user "nobody" does not exist',
    });
    expect(decideReference('group', '#99999999999999999999', undefined, undefined)).toMatchObject({
      kind: 'unresolved',
    });
  });

  it('a name porter writes reads back as that name', () => {
    for (const name of ['2', '#4', 'name:x', 'Sales', '#Sales', 'Sales 2']) {
      const written = nameReference(name);
      expect(referenceLookups(written)).toMatchObject({ name });
      expect(referenceLookups(written).id).toBeUndefined();
    }
    expect(nameReference('Sales')).toBe('Sales');
  });
});
