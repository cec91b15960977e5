import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/ingest/json-value.js';
import { ingestItems, type Invalid } from './ingest-fixture.js';

describe('JSON records lose nothing silently', () => {
  it.each(['json', 'ndjson'] as const)(
    'fails a %s record giving one key twice, naming the key',
    async (format) => {
      const text = '{"username":"alice","dept":"A","dept":"B"}';
      const items = await ingestItems(format === 'json' ? `[${text}]` : `${text}\n`, { format });
      expect(items[0]).toMatchObject({
        kind: 'invalid',
        errorCode: 'PORTER_ROW_INVALID',
        field: 'dept',
      });
      expect((items[0] as Invalid).error).toMatch(/"dept": the key "dept" appears twice/);
    },
  );

  it('fails a duplicate key inside substitutionMap, naming where it is', async () => {
    const items = await ingestItems('[{"username":"alice","substitutionMap":{"a":"1","a":"2"}}]', {
      format: 'json',
    });
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'substitutionMap' });
    expect((items[0] as Invalid).error).toMatch(/"substitutionMap\.a": the key "a" appears twice/);
  });

  it('reports an integer beyond 2^53 as written, not rounded', async () => {
    const items = await ingestItems('{"username":"alice","userId":9007199254740993}\n', {
      format: 'ndjson',
      mode: 'update',
    });
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'userId' });
    const invalid = items[0] as Invalid;
    expect(invalid.error).toMatch(/9007199254740993 is beyond/);
    expect(invalid.error).not.toMatch(/9007199254740992/);
    expect(invalid.input.userId).toBe('9007199254740993');
    expect(invalid.value).toBe('9007199254740993');
  });

  it.each([
    ['1e400', /1e400 is too large for a JSON number \(it would become Infinity\)/],
    ['1e-400', /1e-400 is too small for a JSON number \(it would become 0\)/],
    ['9007199254740993.0', /9007199254740993\.0 has more digits than a JSON number keeps/],
    [
      '0.1000000000000000000001',
      /has more digits than a JSON number keeps \(it would become 0\.1\)/,
    ],
  ])('fails a record whose number %s a double cannot keep exactly', async (written, reason) => {
    for (const format of ['json', 'ndjson'] as const) {
      const text = `{"username":"alice","substitutionMap":{"n":${written}}}`;
      const items = await ingestItems(format === 'json' ? `[${text}]` : `${text}\n`, { format });
      expect(items[0]).toMatchObject({ kind: 'invalid', field: 'substitutionMap' });
      const invalid = items[0] as Invalid;
      expect(invalid.error).toMatch(/^row 1: "substitutionMap\.n": /);
      expect(invalid.error).toMatch(reason);
      expect((invalid.input.substitutionMap as { n: unknown }).n).toBe(written);
    }
  });

  it('fails a CSV substitutionMap cell holding such a number, and a CSV integer beyond 2^53', async () => {
    const items = await ingestItems(
      'username,substitutionMap,userId\nalice,"{""n"":1e400}",\nbob,,9007199254740993\n',
      { mode: 'update' },
    );
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'substitutionMap' });
    expect((items[0] as Invalid).error).toMatch(/1e400 is too large for a JSON number/);
    expect(items[1]).toMatchObject({ kind: 'invalid', field: 'userId' });
    expect((items[1] as Invalid).error).toMatch(/"9007199254740993" is not an integer/);
  });

  it('keeps numbers a double keeps exactly, however they are written', () => {
    expect(parseJsonText('[0.1,1e21,-0.0,0e-400,1.50,2.5E-3,0.30000000000000004,1e308]')).toEqual({
      value: [0.1, 1e21, -0, 0, 1.5, 0.0025, 0.30000000000000004, 1e308],
      problems: [],
      moreProblems: 0,
    });
  });

  it('keeps safe integers and other numbers as numbers', () => {
    expect(parseJsonText('[9007199254740991,-12,1.5,1e3,0]')).toEqual({
      value: [9007199254740991, -12, 1.5, 1000, 0],
      problems: [],
      moreProblems: 0,
    });
  });

  it.each([
    ['at the top', '{"username":"alice","__proto__":{"type":"Administrator"}}', '__proto__'],
    [
      'inside substitutionMap',
      '{"username":"alice","substitutionMap":{"__proto__":{"x":"1"}}}',
      'substitutionMap.__proto__',
    ],
  ])('fails a record with a __proto__ key %s, naming it', async (_where, text, path) => {
    const items = await ingestItems(`[${text}]`, { format: 'json' });
    expect(items[0]).toMatchObject({ kind: 'invalid', errorCode: 'PORTER_ROW_INVALID' });
    expect((items[0] as Invalid).error).toContain(`"${path}": the key "__proto__" is not accepted`);
    expect(Object.getPrototypeOf((items[0] as Invalid).input)).toBe(Object.prototype);
  });

  it('fails a CSV substitutionMap cell with a __proto__ or repeated key', async () => {
    const csv =
      'username,substitutionMap\n' +
      'a,"{""__proto__"":{""x"":""1""}}"\n' +
      'b,"{""k"":""1"",""k"":""2""}"\n' +
      'c,"{""k"":""1""}"\n';
    const items = await ingestItems(csv);
    expect(items.map((item) => item.kind)).toEqual(['invalid', 'invalid', 'record']);
    expect((items[0] as Invalid).error).toMatch(/__proto__/);
    expect((items[1] as Invalid).error).toMatch(/"k" appears twice/);
  });
});
