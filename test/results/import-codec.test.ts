import { describe, expect, it } from 'vitest';
import {
  decodeResult,
  decodeStaged,
  encodeResult,
  encodeStaged,
  storedStatus,
} from '../../src/results/import-codec.js';
import type { RecordResult, StagedRecord } from '../../src/model/import.js';

const columns = ['username', 'email', 'groups'];
const layout = { columns, keyField: 'username' };

function result(input: Record<string, unknown>): RecordResult {
  return {
    row: 7,
    status: 'succeeded',
    key: 'ann',
    action: 'create',
    id: 3,
    attempts: 1,
    line: 8,
    input,
  };
}

describe('stored results', () => {
  it('keeps an input that holds exactly the columns, in order, as its values alone', () => {
    const original = result({ username: 'ann', email: 'a@x', groups: 'Sales|HR' });
    const json = encodeResult(original, layout);
    expect(json).toContain('"in":["ann","a@x","Sales|HR"]');
    expect(json).not.toContain('"email"');
    expect(storedStatus(json)).toBe('succeeded');
    expect(decodeResult(7, json, layout)).toEqual(original);
    // the column names were the bulk of it
    expect(json.length).toBeLessThan(encodeResult(original).length - 20);
  });

  it('keeps any other input as an object, and reads it back whatever the columns', () => {
    for (const input of [
      { username: 'ann', email: 'a@x' },
      { email: 'a@x', username: 'ann', groups: '' },
      { username: 'ann', email: 'a@x', groups: '', extra: 'x' },
      {},
    ]) {
      const original = result(input);
      const json = encodeResult(original, layout);
      expect(json).toContain('"input":');
      expect(decodeResult(7, json, layout)).toEqual(original);
      expect(decodeResult(7, json, { columns: [], keyField: 'username' })).toEqual(original);
    }
  });

  it('gives back values of any JSON type, and a __proto__ column as an own key', () => {
    const values = { username: 'ann', email: null, groups: ['a', { b: 1 }] };
    const original = result(values);
    expect(decodeResult(7, encodeResult(original, layout), layout)).toEqual(original);
    const odd = JSON.parse('{"__proto__":"x","username":"ann"}') as Record<string, unknown>;
    const json = encodeResult(result(odd), { columns: ['__proto__', 'username'] });
    expect(json).toContain('"input":');
    const back = decodeResult(7, json, { columns: ['__proto__', 'username'] });
    expect(Object.keys(back.input)).toEqual(['__proto__', 'username']);
    expect(Object.getPrototypeOf(back.input)).toBe(Object.prototype);
  });

  it('reads a result stored with no layout given unchanged', () => {
    const original = result({ username: 'ann', email: 'a@x', groups: '' });
    expect(decodeResult(7, encodeResult(original), { columns: [] })).toEqual(original);
  });

  it('leaves out what the row implies, and gives it back', () => {
    const original = result({ username: 'ann', email: 'a@x', groups: '' });
    const json = encodeResult(original, layout);
    // the key is the input's username, the line follows the header, one attempt
    expect(json).not.toMatch(/"k"|"l"|"n"|"key"|"line"|"attempts"/);
    expect(json.startsWith('{"s":"succeeded","a":"create"')).toBe(true);
  });

  it('keeps what differs from what the row implies, absent values too', () => {
    const cases: RecordResult[] = [
      { ...result({ username: 'ann' }), key: 'other', line: 30, attempts: 4 },
      { row: 7, status: 'failed', errorCode: 'X', input: { username: 'ann' } },
      { row: 7, status: 'skipped', key: 'ann', attempts: 0, input: { username: 'ann' } },
      { row: 7, status: 'unprocessed', input: {} },
      { row: 7, status: 'succeeded', key: 'ann', line: 8, attempts: 1, input: { username: 5 } },
    ];
    for (const original of cases) {
      const json = encodeResult(original, layout);
      expect(decodeResult(7, json, layout)).toEqual(original);
      expect(storedStatus(json)).toBe(original.status);
    }
  });
});

describe('staged records', () => {
  it('keep a plain CSV row as its values alone, and give it back whole', () => {
    const staged: StagedRecord = {
      row: 4,
      line: 5,
      input: { username: 'ann', email: 'a@x', groups: 'Sales|HR' },
      record: { username: 'ann', email: 'a@x', groups: 'Sales|HR' },
    };
    const json = encodeStaged(staged, layout);
    expect(json).toBe('{"r":4,"in":["ann","a@x","Sales|HR"]}');
    const back = decodeStaged(json, layout);
    expect(back).toEqual(staged);
    // the record is its own object: planning may change it without touching the input
    expect(back.record).not.toBe(back.input);
  });

  it('write a row that is its own record as the general way would, whatever it carries', () => {
    const input = { username: 'ann', email: '=1+1 "x"', groups: 'Sales|HR' };
    const plain: StagedRecord = { row: 7, line: 8, input, record: input };
    expect(encodeStaged(plain, layout)).toBe('{"r":7,"in":["ann","=1+1 \\"x\\"","Sales|HR"]}');
    expect(decodeStaged(encodeStaged(plain, layout), layout)).toEqual(plain);
    // anything beside the row, or columns other than the layout's, take the general way
    const cases: StagedRecord[] = [
      { ...plain, line: 12 },
      { ...plain, sourceRow: 3 },
      { ...plain, warnings: ['w'] },
      { ...plain, anchor: { value: 'E-7', match: 'anchored', key: 'ann' } },
      { row: 7, line: 8, input: { email: 'a@x', username: 'ann' }, record: {} },
    ];
    cases[4]!.record = cases[4]!.input;
    for (const staged of cases) {
      const json = encodeStaged(staged, layout);
      expect(json).not.toMatch(/^\{"r":7,"in":\[[^\]]*\]\}$/);
      expect(decodeStaged(json, layout)).toEqual(staged);
    }
  });

  it('keep a record that differs from its input, and whatever else a record carries', () => {
    const cases: StagedRecord[] = [
      {
        row: 4,
        line: 9,
        sourceRow: 2,
        input: { username: 'ann', email: 'a@x', groups: 'Sales|HR' },
        record: { username: 'ann', email: 'a@x', groups: ['Sales', 'HR'] },
        warnings: ['w'],
      },
      { row: 4, input: {}, record: { username: 'ann' }, serverOnly: { lookalikeOf: 'Ann' } },
      { row: 4, line: 5, input: { email: 'a@x', username: 'ann' }, record: { username: 'ann' } },
    ];
    for (const staged of cases) {
      expect(decodeStaged(encodeStaged(staged, layout), layout)).toEqual(staged);
    }
  });

  it('read a record staged by an earlier version as it was', () => {
    const staged: StagedRecord = { row: 3, line: 4, input: { a: '1' }, record: { a: 1 } };
    expect(decodeStaged(JSON.stringify(staged), layout)).toEqual(staged);
  });
});
