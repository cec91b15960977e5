import { describe, expect, it } from 'vitest';
import { ingestItems, ingestRecords } from './ingest-fixture.js';

describe('JSON and NDJSON records', () => {
  it('reads the elements of a JSON array, numbered from 1, without lines', async () => {
    const records = await ingestRecords('[\n {"username":"alice"},\n {"username":"bob"}\n]');
    expect(records.map((item) => [item.row, item.line, item.record.username])).toEqual([
      [1, undefined, 'alice'],
      [2, undefined, 'bob'],
    ]);
  });

  it('keeps the JSON record as given in input', async () => {
    const records = await ingestRecords('[{"UserName":"alice","groups":["Sales",3]}]');
    expect(records[0].input).toEqual({ UserName: 'alice', groups: ['Sales', 3] });
    expect(records[0].record).toEqual({ username: 'alice', groups: ['Sales', 3] });
  });

  it('reads one NDJSON record per line, skipping blank lines, with their line numbers', async () => {
    const records = await ingestRecords('{"username":"alice"}\r\n\n   \n{"username":"bob"}');
    expect(records.map((item) => [item.row, item.line, item.record.username])).toEqual([
      [1, 1, 'alice'],
      [2, 4, 'bob'],
    ]);
  });

  it('makes an element that is not an object an invalid record', async () => {
    const json = await ingestItems('[{"username":"alice"}, 42, ["bob"]]');
    expect(json.map((item) => item.kind)).toEqual(['record', 'invalid', 'invalid']);
    expect(json[1]).toMatchObject({
      row: 2,
      value: 42,
      input: {},
      error: 'row 2: the record is not a JSON object (42); each record must be {...}',
    });
    const ndjson = await ingestItems('{"username":"alice"}\n"bob"\n', { format: 'ndjson' });
    expect(ndjson[1]).toMatchObject({ kind: 'invalid', row: 2, line: 2, value: 'bob' });
  });
});
