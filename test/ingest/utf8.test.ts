import { describe, expect, it } from 'vitest';
import { completeLength, firstInvalidUtf8Offset, Utf8ChunkDecoder } from '../../src/ingest/utf8.js';
import { chunked, ingestError, ingestItems, ingestRecords, runIngest } from './ingest-fixture.js';

/** "é" is C3 A9, "€" is E2 82 AC, "😀" is F0 9F 98 80: every cut inside them is tried. */
const NAMES = 'username,firstName,lastName\nzoe,Zoë,Müller\neuro,Łukasz,€uro 😀\n';

function withBadByte(text: string, marker: string): Uint8Array {
  const bytes = Buffer.from(text, 'utf8');
  const at = bytes.indexOf(Buffer.from(marker));
  bytes[at] = 0xff;
  return bytes;
}

describe('UTF-8', () => {
  it('accepts a multibyte character split across chunks (CSV), at any cut', async () => {
    const whole = await ingestRecords(NAMES);
    expect(whole[1].record).toEqual({ username: 'euro', firstName: 'Łukasz', lastName: '€uro 😀' });
    for (const size of [1, 2, 3, 4, 5]) {
      expect(await ingestItems(chunked(NAMES, size))).toEqual(whole);
    }
  });

  it('accepts a multibyte character split across chunks (JSON and NDJSON)', async () => {
    const json = '[{"username":"zoë","lastName":"€😀"}]';
    const ndjson = '{"username":"zoë","lastName":"€😀"}\n{"username":"łukasz"}\n';
    for (const size of [1, 2, 3]) {
      expect((await ingestRecords(chunked(json, size)))[0].record).toEqual({
        username: 'zoë',
        lastName: '€😀',
      });
      expect(
        (await ingestRecords(chunked(ndjson, size))).map((item) => item.record.username),
      ).toEqual(['zoë', 'łukasz']);
    }
  });

  it('refuses invalid UTF-8 in a CSV naming the row, line and column', async () => {
    const bytes = withBadByte('username,city\nalice,Lyon\n\nbob,"two\nlines"\ncarol,BAD\n', 'BAD');
    const error = await ingestError(chunked(bytes, 4));
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.details).toMatchObject({ row: 3, line: 6, column: 'city' });
    expect(error.message).toMatch(/Row 3 \(line 6\), column "city", is not valid UTF-8/);
  });

  it('yields the records before the invalid one, then stops', async () => {
    const bytes = withBadByte('username\nalice\nbob\nBAD\ndan\n', 'BAD');
    const outcome = await runIngest(bytes);
    expect(outcome.items.map((item) => item.row)).toEqual([1, 2]);
    expect(outcome.error?.details).toMatchObject({ row: 3, line: 4 });
  });

  it('names the right record at every chunk size, even when the bad byte starts a line', async () => {
    const bytes = withBadByte('username,city\nalice,"Ly\non"\nBADbob,Nice\ncarol,Paris\n', 'BAD');
    for (let size = 1; size <= bytes.length; size++) {
      const outcome = await runIngest(chunked(bytes, size));
      expect(outcome.items.map((item) => item.row)).toEqual([1]);
      expect(outcome.error?.details).toMatchObject({ row: 2, line: 4, column: 'username' });
    }
  });

  it('refuses a CSV ending in the middle of a character', async () => {
    const bytes = Buffer.concat([Buffer.from('username\nalice\nbob'), Buffer.from([0xe2, 0x82])]);
    const outcome = await runIngest(bytes);
    expect(outcome.items.map((item) => item.row)).toEqual([1]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.details).toMatchObject({ row: 2, line: 3 });
  });

  it('accepts a real U+FFFD character', async () => {
    const records = await ingestRecords('username,city\nalice,\uFFFD\n');
    expect(records[0].record.city).toBe('\uFFFD');
  });

  it('refuses invalid UTF-8 in the CSV header', async () => {
    const error = await ingestError(withBadByte('usernameBAD\nalice\n', 'BAD'));
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.message).toMatch(/header \(line 1\)/);
  });

  it('refuses invalid UTF-8 in NDJSON naming the line', async () => {
    const error = await ingestError(withBadByte('{"username":"a"}\n\n{"username":"BAD"}\n', 'BAD'));
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.details).toMatchObject({ row: 2, line: 3 });
  });

  it('refuses invalid UTF-8 in JSON naming the record', async () => {
    const bytes = withBadByte('[{"username":"a"},{"username":"b"},{"username":"BAD"}]', 'BAD');
    const error = await ingestError(chunked(bytes, 7));
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.details).toMatchObject({ row: 3 });
  });

  it('explains a UTF-16 upload read as UTF-8, naming the option', async () => {
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('username\nalice\n', 'utf16le'),
    ]);
    // found by its byte order mark unless UTF-8 is named (test/ingest/encodings.test.ts)
    const error = await ingestError(utf16, { encoding: 'utf-8' });
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.message).toMatch(/UTF-16.*--encoding/);
  });

  describe('chunk decoder', () => {
    it('holds back an incomplete character until the rest arrives', () => {
      const euro = Buffer.from('a€', 'utf8'); // 61 E2 82 AC
      expect(completeLength(euro.subarray(0, 2))).toBe(1);
      expect(completeLength(euro.subarray(0, 3))).toBe(1);
      expect(completeLength(euro)).toBe(4);
      const decoder = new Utf8ChunkDecoder();
      expect(decoder.decode(euro.subarray(0, 2))).toBe('a');
      expect(decoder.decode(euro.subarray(2))).toBe('€');
      expect(() => decoder.end()).not.toThrow();
    });

    it('finds the first invalid byte, including overlong and surrogate forms', () => {
      expect(firstInvalidUtf8Offset(Buffer.from([0x61, 0xc0, 0xaf]))).toBe(1);
      expect(firstInvalidUtf8Offset(Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80]))).toBe(2);
      expect(firstInvalidUtf8Offset(Buffer.from('ok €', 'utf8'))).toBe(-1);
    });

    it('calls a character cut off at the very end invalid', () => {
      const decoder = new Utf8ChunkDecoder();
      decoder.decode(Buffer.from([0x61, 0xe2, 0x82]));
      expect(() => decoder.end()).toThrow();
    });
  });
});
