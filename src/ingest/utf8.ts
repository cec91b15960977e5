/**
 * Strict UTF-8. Uploads must be UTF-8: a byte sequence that is not valid UTF-8 is an error
 * naming where it is, never a silent U+FFFD. A character split across two chunks is carried
 * over and judged whole.
 */
import { isUtf8 } from 'node:buffer';

export const UTF8_BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

/** `ignoreBOM` keeps the text exact: the byte order mark is stripped once, by the reader. */
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of `bytes`, or undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Whether the bytes start like UTF-16 text (a byte order mark), which needs its own advice. */
export function looksLikeUtf16(prefix: Uint8Array): boolean {
  return (
    prefix.length >= 2 &&
    ((prefix[0] === 0xff && prefix[1] === 0xfe) || (prefix[0] === 0xfe && prefix[1] === 0xff))
  );
}

/** Length of a UTF-8 sequence announced by a lead byte; 0 for a byte that cannot lead. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Length of `bytes` without a multibyte character cut off at the end (to wait for the rest). */
export function completeLength(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let back = 1; back <= 3 && back <= end; back++) {
    const byte = bytes[end - back];
    if ((byte & 0xc0) !== 0x80) {
      // the last lead byte: cut before it when its sequence needs more bytes than arrived
      const needed = sequenceLength(byte);
      return needed > back ? end - back : end;
    }
  }
  return end;
}

/** Offset of the first byte that is not part of valid UTF-8; only used to report an error. */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let offset = 0;
  while (offset < bytes.length) {
    const length = sequenceLength(bytes[offset]);
    if (length === 0 || offset + length > bytes.length) return offset;
    if (decodeUtf8(bytes.subarray(offset, offset + length)) === undefined) return offset;
    offset += length;
  }
  return -1;
}

/** Thrown by {@link Utf8ChunkDecoder}; `text` is the valid text before the bad byte. */
export class InvalidUtf8Error extends Error {
  constructor(readonly text: string) {
    super('invalid UTF-8');
    this.name = 'InvalidUtf8Error';
  }
}

/** Decodes a byte stream chunk by chunk, carrying a split character over to the next chunk. */
export class Utf8ChunkDecoder {
  private carry: Uint8Array = new Uint8Array(0);

  /** Text of everything complete so far; throws InvalidUtf8Error at the first bad byte. */
  decode(chunk: Uint8Array): string {
    const bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const complete = completeLength(bytes);
    this.carry = bytes.slice(complete);
    return decodeOrThrow(bytes.subarray(0, complete));
  }

  /** Ends the stream; a character left incomplete at the end is invalid. */
  end(): void {
    if (this.carry.length > 0) throw new InvalidUtf8Error('');
  }
}

function decodeOrThrow(bytes: Uint8Array): string {
  const text = decodeUtf8(bytes);
  if (text !== undefined) return text;
  const offset = firstInvalidUtf8Offset(bytes);
  throw new InvalidUtf8Error(decodeUtf8(bytes.subarray(0, Math.max(offset, 0))) ?? '');
}

/**
 * Checks a byte stream chunk by chunk without decoding it, carrying a split character over;
 * answers the offset of the first invalid byte from the start of the stream.
 */
export class Utf8StreamValidator {
  private carry: Uint8Array = new Uint8Array(0);
  /** Stream offset of the first byte not yet checked (the carry's first byte). */
  private offset = 0;

  /** -1 while everything checked is valid, else the stream offset of the first invalid byte. */
  check(chunk: Uint8Array): number {
    const bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const start = this.offset;
    const complete = completeLength(bytes);
    this.carry = bytes.slice(complete);
    this.offset = start + complete;
    const checked = bytes.subarray(0, complete);
    return isUtf8(checked) ? -1 : start + firstInvalidUtf8Offset(checked);
  }

  /** At the end of the stream: the offset of a character left incomplete, else -1. */
  end(): number {
    return this.carry.length === 0 ? -1 : this.offset;
  }
}
