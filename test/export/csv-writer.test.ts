/**
 * The CSV lines of an export are byte for byte what csv-stringify's defaults make of the
 * formula-safe cells, whatever the cells hold: quotes, delimiters, line breaks, formulas.
 */
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvCellText, csvColumns, csvLine } from '../../src/export/csv-writer.js';
import { PORTABLE_FIELDS } from '../../src/export/portable-record.js';
import { formulaSafe } from '../../src/results/formula-safe.js';
import { seededRandom } from '../../src/sandbox/ids.js';

const PIECES = [
  'a',
  'B c',
  '"',
  ',',
  '\n',
  '\r',
  '=',
  '+',
  '-',
  '@',
  '\t',
  "'",
  '|',
  'é',
  '😀',
  '',
];

function randomValue(random: () => number): unknown {
  const roll = random();
  const text = (): string =>
    Array.from(
      { length: Math.floor(random() * 4) },
      () => PIECES[Math.floor(random() * PIECES.length)],
    ).join('');
  if (roll < 0.4) return text();
  if (roll < 0.55) return Math.floor(random() * 2000) - 1000;
  if (roll < 0.6) return random() < 0.5;
  if (roll < 0.7) return null;
  if (roll < 0.75) return undefined;
  if (roll < 0.9) return Array.from({ length: Math.floor(random() * 3) }, text);
  return { key: text(), list: [1, { nested: text() }] };
}

describe('csvLine', () => {
  it('writes what csv-stringify writes of the formula-safe cells, for 3000 random records', () => {
    const random = seededRandom(5);
    const fields = PORTABLE_FIELDS.users;
    for (let round = 0; round < 3000; round++) {
      let entries = fields.map((field) => [field, randomValue(random)] as [string, unknown]);
      // in column order (some columns missing), shuffled, or with a key no column has
      if (round % 3 === 0) entries = entries.filter(() => random() < 0.7);
      if (round % 5 === 1) entries.sort(() => random() - 0.5);
      if (round % 7 === 2) entries.splice(3, 0, ['extra', 'x']);
      const record = Object.fromEntries(entries);
      const cells = [...fields.map((field) => formulaSafe(csvCellText(record[field]))), ''];
      expect(csvLine(fields, record, () => {})).toBe(stringify([cells], { delimiter: ',' }));
    }
  });

  it('names each field whose list holds the list separator, once', () => {
    for (const record of [
      { groups: ['a|b'], username: 'x|y', forms: ['c|d'] },
      { username: 'x|y', forms: ['c|d'], groups: ['a|b'] },
    ]) {
      const heard: string[] = [];
      csvLine(['groups', 'username', 'forms'], record, (field) => heard.push(field));
      expect(heard).toEqual(['groups', 'forms']);
    }
  });

  it('ends the line with the empty marker cell', () => {
    expect(csvLine(['userId', 'username'], { userId: -5, username: '=1+2' }, () => {})).toBe(
      "'-5,'=1+2,\n",
    );
    expect(csvColumns('users').at(-1)).toBe('porter_export');
  });
});
