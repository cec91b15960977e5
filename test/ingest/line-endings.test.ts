import { describe, expect, it } from 'vitest';
import { chunked, ingestItems, ingestRecords } from './ingest-fixture.js';

describe('mixed line endings', () => {
  const csv = 'username,city\nalice,Lyon\r\nbob,Nice\rcarol,Paris\n\rdan,Metz\r\n';

  it('ends a record at LF, CRLF or CR alike: no stray \\r, no merged rows', async () => {
    const records = await ingestRecords(csv);
    expect(records.map((item) => [item.row, item.line, item.record])).toEqual([
      [1, 2, { username: 'alice', city: 'Lyon' }],
      [2, 3, { username: 'bob', city: 'Nice' }],
      [3, 4, { username: 'carol', city: 'Paris' }],
      [4, 6, { username: 'dan', city: 'Metz' }],
    ]);
  });

  it('reads the same whatever the chunks, a CRLF split between two included', async () => {
    const whole = await ingestItems(csv);
    for (const size of [1, 2, 3, 7]) expect(await ingestItems(chunked(csv, size))).toEqual(whole);
  });

  it('keeps line breaks inside quotes as written and counts them as lines', async () => {
    const records = await ingestRecords(
      'username,address1\r\nalice,"a\rb\r\nc\nd"\nbob,x\rcarol,"e\r\n"\r\ndan,y',
    );
    expect(records.map((item) => [item.line, item.record.address1])).toEqual([
      [2, 'a\rb\r\nc\nd'],
      [6, 'x'],
      [7, 'e\r\n'],
      [9, 'y'],
    ]);
  });

  it('reads a header ended by a lone CR', async () => {
    const records = await ingestRecords('username;city\ralice;Lyon\rbob;Nice');
    expect(records.map((item) => item.record)).toEqual([
      { username: 'alice', city: 'Lyon' },
      { username: 'bob', city: 'Nice' },
    ]);
  });

  it('finds the delimiter of a header that comes after blank lines', async () => {
    const records = await ingestRecords('\r\n\nusername;city\nalice;Lyon\n');
    expect(records.map((item) => [item.line, item.record])).toEqual([
      [4, { username: 'alice', city: 'Lyon' }],
    ]);
  });

  it('strips the CR of CRLF lines in NDJSON', async () => {
    const records = await ingestRecords('{"username":"a"}\r\n{"username":"b"}\n', {
      format: 'ndjson',
    });
    expect(records.map((item) => item.record.username)).toEqual(['a', 'b']);
  });
});
