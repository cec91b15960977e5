import { describe, expect, it } from 'vitest';
import {
  detectFormat,
  formatFromContentType,
  formatFromFileName,
  sniffFormat,
} from '../../src/ingest/detect-format.js';
import { runIngest } from './ingest-fixture.js';

const bytes = (text: string): Uint8Array => Buffer.from(text);

describe('format detection', () => {
  it('reads the format from the file extension, case-insensitively', () => {
    expect(formatFromFileName('people.CSV')).toBe('csv');
    expect(formatFromFileName('people.tsv')).toBe('csv');
    expect(formatFromFileName('dump.json')).toBe('json');
    expect(formatFromFileName('dump.ndjson')).toBe('ndjson');
    expect(formatFromFileName('dump.jsonl')).toBe('ndjson');
    expect(formatFromFileName('dump.xlsx')).toBeUndefined();
  });

  it('reads the format from the content type, ignoring parameters', () => {
    expect(formatFromContentType('text/csv; charset=utf-8')).toBe('csv');
    expect(formatFromContentType('application/json')).toBe('json');
    expect(formatFromContentType('application/x-ndjson')).toBe('ndjson');
    expect(formatFromContentType('text/plain')).toBeUndefined();
  });

  it('sniffs the first non-blank byte: [ is JSON, { is NDJSON, else CSV', () => {
    expect(sniffFormat(bytes(' \n [{"a":1}]'))).toBe('json');
    expect(sniffFormat(bytes('{"a":1}\n'))).toBe('ndjson');
    expect(sniffFormat(bytes('username\nalice'))).toBe('csv');
  });

  it('prefers the explicit format, then the file name, then the content type, then the content', () => {
    const head = bytes('[]');
    expect(
      detectFormat(
        { format: 'csv', fileName: 'a.json', contentType: 'application/x-ndjson' },
        head,
      ),
    ).toBe('csv');
    expect(detectFormat({ fileName: 'a.ndjson', contentType: 'application/json' }, head)).toBe(
      'ndjson',
    );
    expect(
      detectFormat({ fileName: 'upload.bin', contentType: 'application/json' }, bytes('x')),
    ).toBe('json');
    expect(detectFormat({}, head)).toBe('json');
  });

  it('parses an upload with the detected format', async () => {
    const json = await runIngest('[{"username":"alice"}]');
    expect(json.header?.format).toBe('json');
    const ndjson = await runIngest('{"username":"alice"}\n');
    expect(ndjson.header?.format).toBe('ndjson');
    const csv = await runIngest('username\nalice\n');
    expect(csv.header?.format).toBe('csv');
  });
});
