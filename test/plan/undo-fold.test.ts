/**
 * A record an import changed more than once is turned back to what it was before the first
 * change (src/plan/undo-fold.ts): the rules, one case each.
 */
import { describe, expect, it } from 'vitest';
import type { UndoEntry } from '../../src/plan/undo-entry.js';
import { foldUndoEntries } from '../../src/plan/undo-fold.js';

const create = (row: number, id: number): UndoEntry => ({
  row,
  action: 'create',
  id,
  key: `user.${id}`,
  fields: ['username', 'dept'],
  written: `created-${row}`,
});
const update = (
  row: number,
  id: number,
  fields: string[],
  before: Record<string, unknown>,
): UndoEntry => ({
  row,
  action: 'update',
  id,
  key: `user.${id}`,
  fields,
  written: `w-${row}`,
  before,
});
const remove = (row: number, id: number, before: Record<string, unknown>): UndoEntry => ({
  row,
  action: 'delete',
  id,
  key: `user.${id}`,
  fields: [],
  written: 'absent',
  before,
});

describe('foldUndoEntries', () => {
  it('passes entries of records changed once through, in row order', () => {
    const entries = [update(2, 7, ['dept'], { dept: 'A' }), create(1, 8)];
    expect(foldUndoEntries(entries)).toEqual([entries[1], entries[0]]);
  });

  it('created, then changed: deleted if it is as the last change left it', () => {
    const [folded, ...rest] = foldUndoEntries([
      create(1, 5),
      update(4, 5, ['title'], { title: '' }),
    ]);
    expect(rest).toEqual([]);
    expect(folded).toMatchObject({ row: 1, action: 'create', id: 5 });
    expect(folded!.check).toEqual({ fields: ['title'], written: 'w-4' });
  });

  it('created, then deleted: nothing to undo', () => {
    expect(foldUndoEntries([create(1, 5), remove(3, 5, { username: 'user.5' })])).toEqual([]);
  });

  it('changed several times: each field back to its value before the first change of it', () => {
    const [folded] = foldUndoEntries([
      update(2, 9, ['dept', 'title'], { dept: 'Sales' }),
      update(6, 9, ['dept', 'email'], { dept: 'Marketing', email: 'old@example.com' }),
    ]);
    expect(folded).toEqual({
      row: 2,
      action: 'update',
      id: 9,
      key: 'user.9',
      fields: ['dept', 'title', 'email'],
      written: 'w-6',
      // title was given its first value by the import: absent, so it goes back to empty
      before: { dept: 'Sales', email: 'old@example.com' },
      check: { fields: ['dept', 'email'], written: 'w-6' },
    });
  });

  it('changed, then deleted: made again with the values it had before the first change', () => {
    const [folded] = foldUndoEntries([
      update(2, 9, ['dept', 'title'], { dept: 'Sales' }),
      remove(5, 9, { userId: 9, username: 'user.9', dept: 'Marketing', title: 'Boss', groups: [] }),
    ]);
    expect(folded).toMatchObject({
      row: 2,
      action: 'delete',
      id: 9,
      before: { userId: 9, username: 'user.9', dept: 'Sales', title: '', groups: [] },
    });
  });
});
