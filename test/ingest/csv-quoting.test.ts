import { describe, expect, it } from 'vitest';
import { chunked, ingestItems, ingestRecords } from './ingest-fixture.js';

describe('CSV quoting and line numbers', () => {
  it('reads quoted values holding delimiters, doubled quotes and line breaks', async () => {
    const csv =
      'username,company,address1\n' + 'alice,"Acme, Inc.","12 ""Old"" Road\nBuilding B"\n';
    const records = await ingestRecords(csv);
    expect(records[0].record).toEqual({
      username: 'alice',
      company: 'Acme, Inc.',
      address1: '12 "Old" Road\nBuilding B',
    });
  });

  it('numbers rows without the header and gives the line each record starts on', async () => {
    const csv = [
      'username,address1',
      'alice,"line one',
      'line two',
      'line three"',
      'bob,Main Street',
      'carol,"a\r\nb"',
      'dan,x',
    ].join('\n');
    const records = await ingestRecords(csv);
    expect(records.map((item) => [item.row, item.line, item.record.username])).toEqual([
      [1, 2, 'alice'],
      [2, 5, 'bob'],
      [3, 6, 'carol'],
      [4, 8, 'dan'],
    ]);
  });

  it('keeps counting lines across blank lines, which are skipped and not numbered', async () => {
    const records = await ingestRecords('username\r\n\r\nalice\r\n   \r\nbob\r\n');
    expect(records.map((item) => [item.row, item.line])).toEqual([
      [1, 3],
      [2, 5],
    ]);
  });

  it('skips rows whose cells are all empty (spreadsheet leftovers)', async () => {
    const records = await ingestRecords('username,city\nalice,Lyon\n,\n , \nbob,Nice\n');
    expect(records.map((item) => [item.row, item.line, item.record.username])).toEqual([
      [1, 2, 'alice'],
      [2, 5, 'bob'],
    ]);
  });

  it('reads the same records whatever the chunk size', async () => {
    const csv = 'username,address1\nalice,"a\nb"\nbob,"c,d"\n';
    const whole = await ingestItems(csv);
    for (const size of [1, 2, 3, 5, 7]) {
      expect(await ingestItems(chunked(csv, size))).toEqual(whole);
    }
  });

  it('keeps the cells exactly as given in input, spaces included', async () => {
    const records = await ingestRecords('username,city\nalice,  Lyon \n');
    expect(records[0].input).toEqual({ username: 'alice', city: '  Lyon ' });
    expect(records[0].record.city).toBe('  Lyon ');
  });
});
