/**
 * The undo entries of an import that changed one record more than once (a SCIM journal: a user
 * created at 9:02 and given a manager at 9:40), folded into one entry per record, so that an
 * undo turns the record back to what it was before the import's first change of it:
 *
 * - created, then changed: deleted, if it is as the last change left it;
 * - created, then deleted: nothing to undo;
 * - changed several times: each field back to its value before the first change of it, if the
 *   record is as the last change left it;
 * - changed, then deleted: made again with the values it had before the first change.
 *
 * A folded entry is checked against the last change (`check`); it keeps the first change's row.
 * A file import changes each record once, and its entries pass through as they are.
 */
import type { UndoEntry } from './undo-entry.js';

export function foldUndoEntries(entries: readonly UndoEntry[]): UndoEntry[] {
  const byRecord = new Map<string, UndoEntry[]>();
  for (const entry of entries) {
    const id = String(entry.id);
    const list = byRecord.get(id);
    if (list) list.push(entry);
    else byRecord.set(id, [entry]);
  }
  const folded: UndoEntry[] = [];
  for (const list of byRecord.values()) {
    const entry = list.length === 1 ? list[0] : fold(list);
    if (entry) folded.push(entry);
  }
  return folded.sort((left, right) => left.row - right.row);
}

/** One record's entries, in row order, as one; undefined when nothing is left to undo. */
function fold(list: readonly UndoEntry[]): UndoEntry | undefined {
  const ordered = [...list].sort((left, right) => left.row - right.row);
  const first = ordered[0]!;
  const last = ordered.at(-1)!;
  const check = { fields: last.fields, written: last.written };
  if (first.action === 'create') {
    return last.action === 'delete' ? undefined : { ...first, check };
  }
  if (first.action === 'delete') return first;
  // the value of each field before the import's first change of it (absent: it gave the first)
  const before: Record<string, unknown> = {};
  const firstGiven = new Set<string>();
  const seen = new Set<string>();
  for (const entry of ordered) {
    if (entry.action !== 'update') continue;
    for (const field of entry.fields) {
      if (seen.has(field)) continue;
      seen.add(field);
      if (entry.before && Object.hasOwn(entry.before, field)) before[field] = entry.before[field];
      else firstGiven.add(field);
    }
  }
  if (last.action === 'delete') {
    const record: Record<string, unknown> = { ...last.before, ...before };
    for (const field of firstGiven) {
      const value = record[field];
      if (typeof value === 'string') record[field] = '';
      else if (Array.isArray(value)) record[field] = [];
    }
    return { ...last, row: first.row, before: record };
  }
  return {
    row: first.row,
    action: 'update',
    id: first.id,
    key: last.key,
    fields: [...seen],
    written: last.written,
    before,
    check,
  };
}
