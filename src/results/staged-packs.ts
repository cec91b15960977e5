/**
 * Staged records kept a batch at a time: each element of an import's staged list is a pack of
 * up to `size` records, their stored JSON joined by a newline (JSON writes a newline in a string
 * as `\n`, so none occurs inside a record). A batch is one value to write and one to read, not
 * one per record. Every pack but the last is full, so record `i` (0-based) is line
 * `i mod size` of pack `floor(i / size)`. An import staged by a version before packs keeps one
 * record per element: a pack size of 1, the same arithmetic.
 *
 * A pack written full and whole is deflated (a zero byte, then raw deflate: JSON never starts
 * with a zero byte): staged records are most of Redis's memory while an upload is received, and
 * a batch of like records shrinks about sixfold. The last pack, which later records may fill, is
 * kept as text.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** Records per pack at most: a batch of more is read from several packs. */
export const MAX_PACK_RECORDS = 1000;

/** The pack size of an import with this batch size. */
export function packSizeFor(batchSize: number): number {
  return Math.max(1, Math.min(MAX_PACK_RECORDS, Math.floor(batchSize)));
}

/** Packs of fewer records are kept as text: too small to gain by deflating. */
const DEFLATE_FROM = 8;
/** The first byte of a deflated pack. */
const DEFLATED = 0;

/** What staging these records after `before` others writes: the last pack's rest, then new packs. */
export interface PackedRecords {
  /** Appended to the last pack as it is ('' when it is full): a newline, then its records. */
  fill: string;
  /** New packs, each full but perhaps the last; full ones deflated. */
  packs: (string | Buffer)[];
}

function deflated(text: string): Buffer {
  const packed = deflateRawSync(text, { level: 1 });
  const pack = Buffer.allocUnsafe(packed.length + 1);
  pack[0] = DEFLATED;
  packed.copy(pack, 1);
  return pack;
}

/** A pack as read from Redis, as text. */
export function packText(pack: Buffer): string {
  return pack[0] === DEFLATED
    ? inflateRawSync(pack.subarray(1)).toString('utf8')
    : pack.toString('utf8');
}

/** Packs `records` (stored JSON each) to follow `before` records already staged. */
export function packRecords(
  before: number,
  size: number,
  records: readonly string[],
): PackedRecords {
  const inLast = before % size;
  const fillCount = inLast === 0 ? 0 : Math.min(size - inLast, records.length);
  const fill = fillCount === 0 ? '' : `\n${records.slice(0, fillCount).join('\n')}`;
  const packs: (string | Buffer)[] = [];
  for (let index = fillCount; index < records.length; index += size) {
    if (size === 1) packs.push(records[index]!);
    else {
      const text = records.slice(index, index + size).join('\n');
      const full = index + size <= records.length && size >= DEFLATE_FROM;
      packs.push(full ? deflated(text) : text);
    }
  }
  return { fill, packs };
}

/** The list range (inclusive) holding records `start` to `start + count − 1`. */
export function packRange(start: number, count: number, size: number): [number, number] {
  return [Math.floor(start / size), Math.floor((start + count - 1) / size)];
}

/**
 * The stored JSON of records `start` to `start + count − 1`, from the packs packRange named
 * (fewer when the list ends first).
 */
export function unpackRecords(
  packs: readonly Buffer[],
  start: number,
  count: number,
  size: number,
): string[] {
  if (size === 1) return packs.slice(0, count).map((pack) => pack.toString('utf8'));
  const records: string[] = [];
  let skip = start % size;
  for (const pack of packs) {
    const lines = packText(pack).split('\n');
    for (let index = skip; index < lines.length && records.length < count; index++) {
      records.push(lines[index]!);
    }
    skip = 0;
    if (records.length === count) break;
  }
  return records;
}
