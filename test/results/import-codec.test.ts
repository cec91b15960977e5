import { describe, expect, it } from 'vitest';
import { decodeResult, encodeResult, storedStatus } from '../../src/results/import-codec.js';
import type { RecordResult } from '../../src/model/import.js';

const columns = ['username', 'email', 'groups'];

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
    const json = encodeResult(original, columns);
    expect(json).toContain('"in":["ann","a@x","Sales|HR"]');
    expect(json).not.toContain('"email"');
    expect(storedStatus(json)).toBe('succeeded');
    expect(decodeResult(7, json, columns)).toEqual(original);
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
      const json = encodeResult(original, columns);
      expect(json).toContain('"input":');
      expect(decodeResult(7, json, columns)).toEqual(original);
      expect(decodeResult(7, json, [])).toEqual(original);
    }
  });

  it('gives back values of any JSON type, and a __proto__ column as an own key', () => {
    const values = { username: 'ann', email: null, groups: ['a', { b: 1 }] };
    const original = result(values);
    expect(decodeResult(7, encodeResult(original, columns), columns)).toEqual(original);
    const odd = JSON.parse('{"__proto__":"x","username":"ann"}') as Record<string, unknown>;
    const json = encodeResult(result(odd), ['__proto__', 'username']);
    expect(json).toContain('"input":');
    const back = decodeResult(7, json, ['__proto__', 'username']);
    expect(Object.keys(back.input)).toEqual(['__proto__', 'username']);
    expect(Object.getPrototypeOf(back.input)).toBe(Object.prototype);
  });

  it('reads a result stored with no columns given (an earlier version) unchanged', () => {
    const original = result({ username: 'ann', email: 'a@x', groups: '' });
    expect(decodeResult(7, encodeResult(original), columns)).toEqual(original);
  });
});
