/**
 * Excel's CSV: an upload in windows-1252 (latin1), or UTF-16 with or without its byte order
 * mark, is read when its encoding is named (`encoding`) or its UTF-16 mark says so; decoding
 * streams chunk by chunk (a character cut between chunks is carried over), and the bounds
 * apply to the decoded text. A non-UTF-8 upload read as UTF-8 is refused naming the option.
 */
import { describe, expect, it } from 'vitest';
import type { IngestItem } from '../../src/ingest/index.js';
import { previewUpload } from '../../src/ingest/preview.js';
import { runIngest } from './ingest-fixture.js';

const TEXT = 'username,firstName,lastName\ngarcia,María José,García Núñez\nzoe,Zoë,Brontë\n';

function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  for (let index = 0; index + 1 < le.length; index += 2) {
    const low = le[index]!;
    le[index] = le[index + 1]!;
    le[index + 1] = low;
  }
  return le;
}

const BOM_LE = Buffer.of(0xff, 0xfe);
const BOM_BE = Buffer.of(0xfe, 0xff);

/** The bytes one at a time: every character of more than one byte is cut between chunks. */
function* byteByByte(bytes: Buffer): Generator<Uint8Array> {
  for (const byte of bytes) yield Uint8Array.of(byte);
}

function names(items: IngestItem[]): unknown[] {
  return items.map((item) =>
    item.kind === 'record' ? [item.record.firstName, item.record.lastName] : item.kind,
  );
}

const EXPECTED = [
  ['María José', 'García Núñez'],
  ['Zoë', 'Brontë'],
];

describe('an upload in another encoding', () => {
  it('windows-1252 and latin1 are read when named, and refused as UTF-8 naming the option', async () => {
    const bytes = Buffer.from(TEXT, 'latin1');
    for (const encoding of ['windows-1252', 'latin1', 'cp1252']) {
      const outcome = await runIngest(bytes, { encoding });
      expect(outcome.error, encoding).toBeUndefined();
      expect(names(outcome.items)).toEqual(EXPECTED);
    }
    const asUtf8 = await runIngest(bytes);
    expect(asUtf8.error?.message ?? JSON.stringify(asUtf8.items)).toMatch(
      /not valid UTF-8; save the file as UTF-8, or name its encoding \(--encoding windows-1252/,
    );
  });

  it('UTF-16 with its byte order mark, little or big endian, is found without being named', async () => {
    for (const bytes of [
      Buffer.concat([BOM_LE, Buffer.from(TEXT, 'utf16le')]),
      Buffer.concat([BOM_BE, utf16be(TEXT)]),
    ]) {
      const outcome = await runIngest(bytes);
      expect(outcome.error).toBeUndefined();
      expect(outcome.header?.columns).toEqual(['username', 'firstName', 'lastName']);
      expect(names(outcome.items)).toEqual(EXPECTED);
    }
  });

  it('UTF-16 without a mark is read when named; named UTF-8 is read as it is', async () => {
    const le = await runIngest(Buffer.from(TEXT, 'utf16le'), { encoding: 'utf-16le' });
    expect(names(le.items)).toEqual(EXPECTED);
    const be = await runIngest(utf16be(TEXT), { encoding: 'utf-16be' });
    expect(names(be.items)).toEqual(EXPECTED);
    const utf8 = await runIngest(Buffer.from(TEXT, 'utf8'), { encoding: 'utf-8' });
    expect(names(utf8.items)).toEqual(EXPECTED);
  });

  it('decodes as it streams: one byte per chunk gives the same records', async () => {
    const utf16 = await runIngest(
      byteByByte(Buffer.concat([BOM_LE, Buffer.from(TEXT, 'utf16le')])),
    );
    expect(names(utf16.items)).toEqual(EXPECTED);
    const latin = await runIngest(byteByByte(Buffer.from(TEXT, 'latin1')), {
      encoding: 'windows-1252',
    });
    expect(names(latin.items)).toEqual(EXPECTED);
  });

  it('the record size bound holds on the decoded text', async () => {
    // 80 bytes of latin1, 160 of UTF-8: over a 120-byte bound once decoded
    const long = 'é'.repeat(80);
    const bytes = Buffer.from(`username,firstName\nshort,Ana\nlong,${long}\n`, 'latin1');
    const outcome = await runIngest(bytes, { encoding: 'latin1', maxRecordBytes: 120 });
    expect(
      outcome.items.map((item) => (item.kind === 'invalid' ? item.errorCode : item.kind)),
    ).toEqual(['record', 'PORTER_RECORD_TOO_LARGE']);
  });

  it('a broken UTF-16 text is unreadable; an unknown encoding is a usage error', async () => {
    // a lone high surrogate
    const broken = Buffer.concat([
      BOM_LE,
      Buffer.from('username\n', 'utf16le'),
      Buffer.of(0x00, 0xd8),
    ]);
    const outcome = await runIngest(broken);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.message).toMatch(/not valid utf-16le text/);
    await expect(runIngest(Buffer.from(TEXT), { encoding: 'klingon' })).rejects.toMatchObject({
      code: 'PORTER_USAGE',
      message: expect.stringMatching(/--encoding: "klingon" is not an encoding/),
    });
  });

  it('a preview reads the head in its encoding', async () => {
    const preview = await previewUpload(Buffer.concat([BOM_BE, utf16be(TEXT)]), {
      resource: 'users',
      mode: 'upsert',
    });
    expect(preview.columns.map((column) => column.name)).toEqual([
      'username',
      'firstName',
      'lastName',
    ]);
    const latin = await previewUpload(Buffer.from(TEXT, 'latin1'), {
      resource: 'users',
      mode: 'upsert',
      encoding: 'windows-1252',
    });
    expect(latin.records.map((record) => record.record?.firstName)).toEqual(['María José', 'Zoë']);
  });
});
