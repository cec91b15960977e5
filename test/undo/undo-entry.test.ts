/**
 * What an import keeps per changed record: built from the op the server applied, kept compact,
 * read back exactly, and fingerprinted the way the server reads fields back.
 */
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/plan/fingerprint.js';
import type { PlannedOp } from '../../src/plan/planned-op.js';
import {
  decodeUndoEntry,
  encodeUndoEntry,
  undoEntryOf,
  writtenFingerprint,
} from '../../src/plan/undo-entry.js';

function op(overrides: Partial<PlannedOp>): PlannedOp {
  return {
    row: 3,
    key: 'ada',
    action: 'update',
    method: 'PUT',
    payload: {},
    knownAbsent: false,
    warnings: [],
    ...overrides,
  };
}

describe('undo entries', () => {
  it('an update keeps the changed fields before it, and nothing for an unchanged record or a failure', () => {
    const update = op({
      existingId: 7,
      payload: { userId: 7, username: 'ada', email: 'b@x', city: 'Oslo', status: 'Locked' },
      changes: [
        { field: 'email', from: 'a@x', to: 'b@x' },
        { field: 'status', from: 'Active', to: 'Locked' },
        { field: 'city', to: 'Oslo' },
      ],
    });
    const entry = undoEntryOf('users', update, { status: 'succeeded', id: 7 })!;
    expect(entry).toMatchObject({
      row: 3,
      action: 'update',
      id: 7,
      fields: ['email', 'status', 'city'],
      before: { email: 'a@x', status: 'Active' },
    });
    expect(entry.before).not.toHaveProperty('city');
    expect(undoEntryOf('users', update, { status: 'failed' })).toBeUndefined();
    expect(undoEntryOf('users', op({ existingId: 7, changes: [] }), { status: 'succeeded' })).toBe(
      undefined,
    );
  });

  it('a create keeps the id the server gave; a delete keeps the whole record', () => {
    const created = undoEntryOf(
      'groups',
      op({ action: 'create', method: 'POST', payload: { name: 'Crew', priority: 2 } }),
      { status: 'succeeded', id: 42 },
    );
    expect(created).toMatchObject({ action: 'create', id: 42, fields: ['name', 'priority'] });
    const record = { id: 9, name: 'Crew', users: [1, 2], ldapDn: null };
    const deleted = undoEntryOf(
      'groups',
      op({ action: 'delete', method: 'DELETE', existingId: 9, payload: { id: 9 }, before: record }),
      { status: 'succeeded', id: 9 },
    );
    expect(deleted).toMatchObject({ action: 'delete', id: 9, written: 'absent', before: record });
  });

  it('reads back exactly what was kept, absent and null fields included', () => {
    const entry = {
      row: 12,
      action: 'delete' as const,
      id: 5,
      key: 'bob',
      fields: [],
      written: 'absent',
      before: { userId: 5, username: 'bob', type: null, groups: [3], extra: { a: 1 } },
    };
    const text = encodeUndoEntry('users', entry);
    expect(text.length).toBeLessThan(JSON.stringify(entry).length);
    expect(decodeUndoEntry('users', 12, text)).toEqual(entry);
  });

  it('fingerprints fields the way the server reads them back', () => {
    const fields = ['email', 'groups', 'position', 'city'];
    const sent = { email: 'a@x', groups: [4, 7], position: 'Boss', city: '' };
    expect(writtenFingerprint('users', sent, fields)).toBe(
      // lists as sets, "" as absent, position never read back as sent
      writtenFingerprint('users', { email: 'a@x', groups: [7, 4], position: '' }, fields),
    );
    expect(writtenFingerprint('users', sent, fields)).not.toBe(
      writtenFingerprint('users', { ...sent, email: 'other@x' }, fields),
    );
    // a field outside the ones written does not count
    expect(writtenFingerprint('users', sent, fields)).toBe(
      writtenFingerprint('users', { ...sent, dept: 'Ops' }, fields),
    );
  });

  it('is the fingerprint of the object of those fields, as entries kept before compare', () => {
    const sent = { email: 'a@x', groups: [7, 4], position: 'Boss', city: '', dept: { b: 1, a: 2 } };
    // in any order, a field named twice, a field not sent
    const fields = ['groups', 'dept', 'email', 'position', 'city', 'email', 'phone'];
    expect(writtenFingerprint('users', sent, fields)).toBe(
      fingerprint({ dept: { a: 2, b: 1 }, email: 'a@x', groups: [4, 7] }),
    );
    // plain values only, and a field named by a number
    const plain = { username: 'ada', email: 'a@x', groups: [7, 4], active: true, 12: 'x' };
    expect(writtenFingerprint('users', plain, ['username', 'groups', 'email', 'active'])).toBe(
      fingerprint({ active: true, email: 'a@x', groups: [4, 7], username: 'ada' }),
    );
    expect(writtenFingerprint('users', plain, ['username', '12'])).toBe(
      fingerprint({ username: 'ada', 12: 'x' }),
    );
  });
});
