/**
 * Uploads in another encoding than UTF-8: Excel's "CSV" is windows-1252 on a Western Windows,
 * its "Unicode text" UTF-16 with a byte order mark. An upload in a named encoding
 * (`--encoding`, `encoding` over HTTP), or one that starts with a UTF-16 byte order mark, is
 * decoded chunk by chunk (a character split across chunks is carried over) and handed on as
 * UTF-8, so every later bound (a record's size, a cell's) applies to the decoded text. Node's
 * TextDecoder (WHATWG encodings, ICU) does the decoding: no other dependency.
 */
import { TextDecoder } from 'node:util';
import { PorterError } from '../errors/porter-error.js';
import type { IngestSource } from './byte-source.js';

/** The option's spelling, for messages that tell how to name an encoding. */
export const ENCODING_ADVICE =
  'save the file as UTF-8, or name its encoding (--encoding windows-1252, latin1, utf-16le …; encoding= over HTTP)';

/** Encodings named most often, for help texts; any WHATWG label is taken. */
export const COMMON_ENCODINGS = ['utf-8', 'windows-1252', 'latin1', 'utf-16le', 'utf-16be'];

/** The help text of `--encoding`, the same on every command that reads a file. */
export const ENCODING_OPTION_TEXT =
  "the file's text encoding: windows-1252 (Excel's CSV), latin1, utf-16le, utf-16be, utf-8 … (default: UTF-8, or UTF-16 when the file starts with its byte order mark)";

const UTF8_NAMES = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8']);

/**
 * The canonical name of an encoding label (`latin1` → `windows-1252`, as WHATWG decodes it), or
 * PORTER_USAGE naming the common ones. Undefined stays undefined: UTF-8, or a UTF-16 BOM.
 */
export function checkEncoding(label: string | undefined, what = '--encoding'): string | undefined {
  if (label === undefined) return undefined;
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    throw new PorterError(
      'PORTER_USAGE',
      `${what}: "${label.slice(0, 40)}" is not an encoding porter knows; use one of ${COMMON_ENCODINGS.join(', ')} (or another WHATWG encoding label)`,
    );
  }
}

/** The encoding a UTF-16 byte order mark announces, if the bytes start with one. */
function utf16ByBom(head: Uint8Array): string | undefined {
  if (head.length < 2) return undefined;
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

type Chunk = Uint8Array | string;

function toBytes(chunk: Chunk): Uint8Array {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
}

async function* chunksOf(source: IngestSource): AsyncGenerator<Chunk> {
  if (typeof source === 'string' || source instanceof Uint8Array) {
    yield source;
    return;
  }
  yield* source as AsyncIterable<Chunk> | Iterable<Chunk>;
}

/**
 * The upload as UTF-8 bytes: as it is when it is UTF-8 (named so, or not named and without a
 * UTF-16 byte order mark), else decoded from its encoding as it streams. Text that is not valid
 * in the encoding (a lone UTF-16 surrogate, an odd last byte) is PORTER_INPUT_UNREADABLE.
 */
export function decodedSource(source: IngestSource, encoding: string | undefined): IngestSource {
  if (encoding !== undefined && UTF8_NAMES.has(encoding)) return source;
  // a string was decoded already
  if (typeof source === 'string') return source;
  return decodeChunks(source, encoding);
}

async function* decodeChunks(
  source: Exclude<IngestSource, string>,
  named: string | undefined,
): AsyncGenerator<Uint8Array> {
  const chunks = chunksOf(source);
  let decoder: TextDecoder | undefined;
  let head: Uint8Array = new Uint8Array(0);
  let encoding = named;
  try {
    for await (const chunk of chunks) {
      const bytes = toBytes(chunk);
      if (decoder === undefined) {
        if (encoding === undefined) {
          // not named: a UTF-16 byte order mark says so, else the bytes are UTF-8 as they are
          head = head.length === 0 ? bytes : Buffer.concat([head, bytes]);
          if (head.length < 2) continue;
          encoding = utf16ByBom(head);
          if (encoding === undefined) {
            yield head;
            yield* passThrough(chunks);
            return;
          }
        } else {
          head = bytes;
        }
        // the decoder drops a byte order mark of its own encoding
        decoder = new TextDecoder(encoding, { fatal: true });
        yield encoded(decoder, head, true, encoding);
        continue;
      }
      yield encoded(decoder, bytes, true, encoding!);
    }
    if (decoder === undefined) {
      // fewer than two bytes in all: nothing to decode by a mark
      if (encoding === undefined) {
        if (head.length > 0) yield head;
        return;
      }
      decoder = new TextDecoder(encoding, { fatal: true });
      if (head.length > 0) yield encoded(decoder, head, true, encoding);
    }
    yield encoded(decoder, new Uint8Array(0), false, encoding!);
  } finally {
    await chunks.return(undefined);
  }
}

async function* passThrough(chunks: AsyncGenerator<Chunk>): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) yield toBytes(chunk);
}

function encoded(
  decoder: TextDecoder,
  bytes: Uint8Array,
  stream: boolean,
  encoding: string,
): Uint8Array {
  try {
    return Buffer.from(decoder.decode(bytes, { stream }), 'utf8');
  } catch {
    throw new PorterError(
      'PORTER_INPUT_UNREADABLE',
      `The upload is not valid ${encoding} text; ${ENCODING_ADVICE}.`,
    );
  }
}

/** A whole head of an upload (a preview), as UTF-8 bytes; a character cut at its end is left out. */
export function decodedHead(head: Uint8Array, encoding: string | undefined): Uint8Array {
  if (encoding !== undefined && UTF8_NAMES.has(encoding)) return head;
  const used = encoding ?? utf16ByBom(head);
  if (used === undefined) return head;
  const decoder = new TextDecoder(used, { fatal: true });
  return encoded(decoder, head, true, used);
}
