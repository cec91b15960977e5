/**
 * A record's field-level changes as one readable cell: `email: a@x → b@x; groups: +Sales −Temps`.
 * Lists show what they gain and lose, by name where the plan knows the names of their ids.
 */
import type { FieldChange } from '../model/import.js';

export function changesText(changes: readonly FieldChange[] | undefined): string {
  if (!changes || changes.length === 0) return '';
  return changes.map(changeText).join('; ');
}

function changeText(change: FieldChange): string {
  const { from, to } = change;
  if (Array.isArray(to) && (Array.isArray(from) || from === undefined)) {
    const before = (from ?? []) as unknown[];
    const label = (item: unknown): string =>
      typeof item === 'number' && change.names?.[String(item)] !== undefined
        ? change.names[String(item)]!
        : valueText(item);
    const added = to.filter((item) => !before.some((old) => sameItem(old, item)));
    const removed = before.filter((old) => !to.some((item) => sameItem(old, item)));
    const parts = [
      ...added.map((item) => `+${label(item)}`),
      ...removed.map((item) => `−${label(item)}`),
    ];
    return `${change.field}: ${parts.length > 0 ? parts.join(' ') : 'reordered'}`;
  }
  return `${change.field}: ${valueText(from)} → ${valueText(to)}`;
}

function sameItem(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function valueText(value: unknown): string {
  if (value === undefined) return '(none)';
  if (value === '') return '""';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
