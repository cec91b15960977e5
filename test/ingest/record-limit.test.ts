import { describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { CsvTokenizer, type CsvRecord } from '../../src/ingest/csv-tokenizer.js';
import { DEFAULT_MAX_RECORD_BYTES } from '../../src/ingest/index.js';
import { JsonArraySplitter, type JsonElement } from '../../src/ingest/json-splitter.js';
import { chunked, ingestItems, runIngest, type Invalid } from './ingest-fixture.js';

const MIB = 1024 * 1024;

function tooLarge(item: unknown): void {
  expect(item).toMatchObject({ kind: 'invalid', errorCode: 'PORTER_RECORD_TOO_LARGE' });
  expect((item as Invalid).error).toMatch(/more than the \d+ a record may have/);
}

describe('the record size limit', () => {
  it('is PORTER_MAX_RECORD_BYTES, 1 MiB unless set', () => {
    expect(loadEnv({}).PORTER_MAX_RECORD_BYTES).toBe(MIB);
    expect(DEFAULT_MAX_RECORD_BYTES).toBe(MIB);
    expect(loadEnv({ PORTER_MAX_RECORD_BYTES: '2048' }).PORTER_MAX_RECORD_BYTES).toBe(2048);
    expect(() => loadEnv({ PORTER_MAX_RECORD_BYTES: '0' })).toThrow(/PORTER_MAX_RECORD_BYTES/);
  });

  it('fails a CSV row over the default limit alone; the rows around it go on', async () => {
    const csv = `username,dept\nalice,a\nbob,"${'x'.repeat(MIB + 10)}"\ncarol,c\n`;
    const items = await ingestItems(chunked(csv, 64 * 1024));
    expect(items.map((item) => [item.row, item.line, item.kind])).toEqual([
      [1, 2, 'record'],
      [2, 3, 'invalid'],
      [3, 4, 'record'],
    ]);
    tooLarge(items[1]);
    expect((items[1] as Invalid).input).toEqual({});
  });

  it('fails a JSON element and an NDJSON line over the limit alone', async () => {
    const big = JSON.stringify({ username: 'bob', dept: 'x'.repeat(5000) });
    const json = await ingestItems(`[{"username":"a"},${big},{"username":"c"}]`, {
      format: 'json',
      maxRecordBytes: 1000,
    });
    expect(json.map((item) => item.kind)).toEqual(['record', 'invalid', 'record']);
    tooLarge(json[1]);
    const ndjson = await ingestItems(
      chunked(`{"username":"a"}\n${big}\n{"username":"c"}\n${big}`, 300),
      { format: 'ndjson', maxRecordBytes: 1000 },
    );
    expect(ndjson.map((item) => [item.row, item.line, item.kind])).toEqual([
      [1, 1, 'record'],
      [2, 2, 'invalid'],
      [3, 3, 'record'],
      [4, 4, 'invalid'],
    ]);
    tooLarge(ndjson[3]);
  });

  it('keeps no more than about the limit of a record in memory', () => {
    const limit = 100 * 1024;
    const chunk = Buffer.alloc(16 * 1024, 'x'.charCodeAt(0));
    const splitter = new JsonArraySplitter(limit, 64);
    const elements: JsonElement[] = [];
    splitter.write(Buffer.from('[{"dept":"'), elements);
    let most = 0;
    for (let index = 0; index < 640; index++) {
      splitter.write(chunk, elements); // 10 MiB of one element
      most = Math.max(most, splitter.bufferedBytes);
    }
    splitter.write(Buffer.from('"}]'), elements);
    expect(most).toBeLessThanOrEqual(limit);
    expect(elements).toEqual([{ tooLarge: 640 * chunk.length + 11 }]);

    const tokenizer = new CsvTokenizer(0x2c, limit);
    const records: CsvRecord[] = [];
    most = 0;
    tokenizer.write(Buffer.from('a,"'), records);
    for (let index = 0; index < 640; index++) {
      tokenizer.write(chunk, records);
      most = Math.max(most, tokenizer.bufferedBytes);
    }
    tokenizer.write(Buffer.from('"\nb,c\n'), records);
    expect(most).toBeLessThanOrEqual(limit + chunk.length);
    expect(records).toEqual([
      { cells: [], line: 1, bytes: 640 * chunk.length + 4, tooLarge: 640 * chunk.length + 4 },
      { cells: ['b', 'c'], line: 2, bytes: 3 },
    ]);
  });

  it('refuses a CSV header over the limit', async () => {
    const outcome = await runIngest(`username,${'x'.repeat(2000)}\nalice,a\n`, {
      maxRecordBytes: 1000,
    });
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.message).toMatch(/CSV header .* more than the 1000 bytes/);
  });
});

describe('bounded messages and nesting', () => {
  it('names the first 20 of 10,000 unknown columns and counts the rest', async () => {
    const columns = Array.from({ length: 10_000 }, (_, index) => `extra${index}`);
    const outcome = await runIngest(`username,${columns.join(',')}\n`);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNKNOWN_COLUMN');
    const message = outcome.error?.message ?? '';
    expect(message).toMatch(/"extra0", "extra1", .*"extra19" and 9980 more match no field/);
    expect(message).not.toMatch(/extra20"/);
    expect(message.length).toBeLessThan(2000);
    expect(outcome.error?.details).toMatchObject({ count: 10_000 });
    expect((outcome.error?.details.columns as string[]).length).toBe(20);
  });

  it('shortens a huge column name in messages', async () => {
    const outcome = await runIngest(`username,${'y'.repeat(100_000)}\nalice,a\n`);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNKNOWN_COLUMN');
    expect(outcome.error?.message.length).toBeLessThan(1000);
  });

  it('refuses JSON nested 100,000 deep as unreadable, naming the depth limit', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const [text, format] of [
      [`[{"username":"a"},{"x":${deep}}]`, 'json'],
      [`{"username":"a"}\n{"x":${deep}}\n`, 'ndjson'],
    ] as const) {
      const outcome = await runIngest(text, { format });
      expect(outcome.items.map((item) => item.row)).toEqual([1]);
      expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
      expect(outcome.error?.message).toMatch(/record 2.*deeper than 64 levels, the limit/);
      expect(outcome.error?.details).toMatchObject({ row: 2, depthLimit: 64 });
    }
  });
});
