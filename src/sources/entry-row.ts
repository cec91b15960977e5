/**
 * A directory entry as a row for the mapping: its DN as `dn`, each attribute as a column named
 * as in the directory, one value as text, several as a list; a binary objectGUID as its GUID
 * text (the form AD tools show).
 */
import type { Entry } from 'ldapts';

export type SourceRow = Record<string, string | string[]>;

/** The text of an Active Directory GUID: its first three parts are stored little-endian. */
export function guidText(bytes: Buffer): string {
  if (bytes.length !== 16) return bytes.toString('hex');
  const hex = (start: number, end: number, reverse: boolean): string => {
    const part = Buffer.from(bytes.subarray(start, end));
    return (reverse ? part.reverse() : part).toString('hex');
  };
  return [
    hex(0, 4, true),
    hex(4, 6, true),
    hex(6, 8, true),
    hex(8, 10, false),
    hex(10, 16, false),
  ].join('-');
}

function valueText(name: string, value: Buffer | string): string {
  if (typeof value === 'string') return value;
  return name.toLowerCase() === 'objectguid' ? guidText(value) : value.toString('base64');
}

/** The values of an attribute as texts (none when absent). */
export function attributeValues(entry: Entry, name: string): string[] {
  const value = entry[name];
  if (value === undefined) return [];
  const values = Array.isArray(value) ? value : [value];
  return (values as Array<Buffer | string>).map((one) => valueText(name, one));
}

/** The row of an entry: `dn` and the wanted attributes it has, named as asked. */
export function entryRow(entry: Entry, attributes: readonly string[]): SourceRow {
  const row: SourceRow = { dn: entry.dn };
  const byLowerName = new Map(Object.keys(entry).map((key) => [key.toLowerCase(), key]));
  for (const name of attributes) {
    const key = byLowerName.get(name.toLowerCase());
    if (key === undefined || key === 'dn') continue;
    const values = attributeValues(entry, key);
    if (values.length === 0) continue;
    row[name] = values.length === 1 ? values[0]! : values;
  }
  return row;
}

/** A DN in one form for comparing: lower case, no spaces around separators. */
export function dnKey(dn: string): string {
  return dn
    .trim()
    .toLowerCase()
    .replace(/\s*([,=+])\s*/g, '$1');
}
