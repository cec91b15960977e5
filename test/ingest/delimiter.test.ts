import { describe, expect, it } from 'vitest';
import { detectDelimiter } from '../../src/ingest/detect-delimiter.js';
import { ingest } from '../../src/ingest/index.js';
import { PorterError } from '../../src/errors/porter-error.js';
import { ingestRecords, runIngest } from './ingest-fixture.js';

const bytes = (text: string): Uint8Array => Buffer.from(text);

describe('CSV delimiter', () => {
  it.each([
    [',', 'username,email,city\nalice,a@example.com,Lyon\n'],
    [';', 'username;email;city\nalice;a@example.com;Lyon\n'],
    ['\t', 'username\temail\tcity\nalice\ta@example.com\tLyon\n'],
    ['|', 'username|email|city\nalice|a@example.com|Lyon\n'],
  ])('detects %j from the header line', async (delimiter, csv) => {
    expect(detectDelimiter(bytes(csv))).toBe(delimiter);
    const outcome = await runIngest(csv);
    expect(outcome.header?.delimiter).toBe(delimiter);
    expect(outcome.items).toMatchObject([
      { kind: 'record', record: { username: 'alice', email: 'a@example.com', city: 'Lyon' } },
    ]);
  });

  it('counts candidates outside quotes only', () => {
    expect(detectDelimiter(bytes('"a;b;c;d",e,f\n'))).toBe(',');
    expect(detectDelimiter(bytes('"a,b,c";d\n'))).toBe(';');
  });

  it('looks at the header line only', () => {
    expect(detectDelimiter(bytes('username;city\nalice,bob,carol,dan;Lyon\n'))).toBe(';');
  });

  it('reads a one-column header with a comma', () => {
    expect(detectDelimiter(bytes('username\nalice\n'))).toBe(',');
  });

  it('uses a given delimiter instead of detecting one', async () => {
    // the header alone would suggest ',' but the cells use ';'
    const records = await ingestRecords('username;company\nalice;"Acme, Inc."\n', {
      delimiter: ';',
    });
    expect(records[0].record).toEqual({ username: 'alice', company: 'Acme, Inc.' });
  });

  it('accepts "tab" and "\\t" as spellings of the tab delimiter', async () => {
    const records = await ingestRecords('username\tcity\nalice\tLyon\n', { delimiter: 'tab' });
    expect(records[0].record).toEqual({ username: 'alice', city: 'Lyon' });
    const again = await ingestRecords('username\tcity\nalice\tLyon\n', { delimiter: '\\t' });
    expect(again[0].record).toEqual({ username: 'alice', city: 'Lyon' });
  });

  it('refuses any other delimiter before reading', () => {
    expect(() => ingest('x', { resource: 'users', mode: 'create', delimiter: ':' })).toThrow(
      PorterError,
    );
    try {
      ingest('x', { resource: 'users', mode: 'create', delimiter: ':' });
    } catch (error) {
      expect((error as PorterError).code).toBe('PORTER_USAGE');
    }
  });
});
