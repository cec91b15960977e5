/**
 * The upload as a pull stream of byte chunks, with a look at its beginning (format, delimiter)
 * before parsing starts. Nothing is read ahead beyond what a look asked for, so backpressure
 * reaches the source unchanged. Chunks are handed on in slices of at most SLICE_BYTES, and the
 * event loop gets a turn between slices when the pacer says so: one huge chunk (a whole upload
 * in memory) is never parsed in one go.
 */
import { Pacer } from './pacer.js';
import { UTF8_BOM } from './utf8.js';

/** Largest piece of a chunk parsed without a look at the pacer. */
export const SLICE_BYTES = 16 * 1024;

/**
 * What `ingest` reads from: a Node readable (file, HTTP body), any (async) iterable of chunks,
 * or a whole small upload as one string or byte array.
 */
export type IngestSource =
  | AsyncIterable<Uint8Array | string>
  | Iterable<Uint8Array | string>
  | NodeJS.ReadableStream
  | Uint8Array
  | string;

type Chunk = Uint8Array | string | Buffer;

function iteratorOf(source: IngestSource): AsyncIterator<Chunk> | Iterator<Chunk> {
  if (typeof source === 'string' || source instanceof Uint8Array)
    return [source][Symbol.iterator]();
  if (Symbol.asyncIterator in source)
    return (source as AsyncIterable<Chunk>)[Symbol.asyncIterator]();
  return (source as Iterable<Chunk>)[Symbol.iterator]();
}

function toBytes(chunk: Chunk): Uint8Array {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
}

/** Reads an upload once: `peek` what the start holds, then `chunks()` from the first byte. */
export class ByteReader {
  private readonly iterator: AsyncIterator<Chunk> | Iterator<Chunk>;
  private head: Uint8Array = new Uint8Array(0);
  private ended = false;
  private bomChecked = false;

  constructor(
    source: IngestSource,
    private readonly pacer: Pacer = new Pacer(),
  ) {
    this.iterator = iteratorOf(source);
  }

  /** Whether the whole upload has been read (into the peeked head, or handed on). */
  get exhausted(): boolean {
    return this.ended;
  }

  /**
   * The bytes read so far, reading more until `enough(head)` holds, `maxBytes` are in or the
   * upload ends. A UTF-8 byte order mark is dropped here, once, for every format.
   */
  async peek(enough: (head: Uint8Array) => boolean, maxBytes = Infinity): Promise<Uint8Array> {
    while (
      !this.ended &&
      !(this.bomChecked && (this.head.length >= maxBytes || enough(this.head)))
    ) {
      const next = await this.iterator.next();
      if (next.done === true) {
        this.ended = true;
      } else {
        const bytes = toBytes(next.value);
        if (bytes.length > 0) this.head = this.head.length === 0 ? bytes : concat(this.head, bytes);
      }
      if (!this.bomChecked && (this.head.length >= UTF8_BOM.length || this.ended)) {
        this.bomChecked = true;
        if (startsWith(this.head, UTF8_BOM)) this.head = this.head.subarray(UTF8_BOM.length);
      }
    }
    return this.head;
  }

  /** Every byte of the upload from the start (BOM excepted), including what was peeked. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    await this.peek(() => true);
    const head = this.head;
    this.head = new Uint8Array(0);
    yield* this.slices(head);
    while (!this.ended) {
      const next = await this.iterator.next();
      if (next.done === true) {
        this.ended = true;
      } else {
        yield* this.slices(toBytes(next.value));
      }
    }
  }

  private async *slices(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < bytes.length; offset += SLICE_BYTES) {
      yield bytes.subarray(offset, offset + SLICE_BYTES);
      if (this.pacer.chunkDone()) await this.pacer.pause();
    }
  }

  /** Stops reading; a Node stream source is destroyed through its iterator's `return`. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.iterator.return?.();
  }
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  return Buffer.concat([first, second]);
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((byte, index) => bytes[index] === byte);
}
