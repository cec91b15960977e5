/**
 * The array level of a JSON answer read from its bytes, chunk by chunk: the brackets, the commas
 * and blanks between elements, and each element handed to `element()` as bytes. An element cut
 * by a chunk's end is carried: its end is found by a scan of its structure that goes on with the
 * next chunk (each byte scanned once), then it is handed over whole. Readers that make something
 * other than record objects of an answer (the CSV export's lines, the groups' names) extend it.
 */
import { JsonSyntaxError } from './json-array-splitter.js';
import { CLOSE_BRACKET, COMMA, OPEN_BRACKET, isWhitespace } from '../util/json-bytes.js';
import { ElementEnd } from '../util/element-end.js';

type Expect = 'open' | 'element-or-close' | 'element' | 'comma-or-close' | 'nothing';

export abstract class JsonArrayWalker {
  /** What the first non-blank byte said: an array, something else, or not seen yet. */
  kind: 'unknown' | 'array' | 'other' = 'unknown';
  private expect: Expect = 'open';
  /** The element cut by a chunk's end: its bytes so far. */
  private carried: Buffer[] | undefined;
  private readonly elementEnd = new ElementEnd();
  private offset = 0;

  /**
   * Reads one element starting at `start`: returns its end, or -1 when it runs past `buf` (then
   * call carry()). `whole`: `buf` from `start` is the element, all of it.
   */
  protected abstract element(buf: Buffer, start: number, whole: boolean): number;

  /** Reads one chunk, element by element. */
  protected walk(chunk: Buffer): void {
    let pos = 0;
    if (this.carried !== undefined) {
      const end = this.elementEnd.scan(chunk, 0);
      if (end === -1) {
        this.carried.push(chunk);
        this.offset += chunk.length;
        return;
      }
      const whole = Buffer.concat([...this.carried, chunk.subarray(0, end)]);
      this.carried = undefined;
      this.element(whole, 0, true);
      this.expect = 'comma-or-close';
      pos = end;
    }
    this.array(chunk, pos);
    this.offset += chunk.length;
  }

  /**
   * The end of the element at `start` by its structure; -1 when `buf` ends inside it, and then
   * the element is carried to the next chunk.
   */
  protected endOrCarry(buf: Buffer, start: number): number {
    const end = this.elementEnd.start(buf, start);
    if (end === -1) this.carried = [buf.subarray(start)];
    return end;
  }

  /** Ends the input; throws when an array began and was not closed. */
  end(): void {
    if (this.kind !== 'array') return;
    if (this.expect !== 'nothing' || this.carried !== undefined) {
      throw new JsonSyntaxError(`the answer ended before its array closed (${this.offset} bytes)`);
    }
  }

  private array(buf: Buffer, from: number): void {
    const length = buf.length;
    let pos = from;
    while (pos < length) {
      const byte = buf[pos]!;
      if (isWhitespace(byte)) {
        pos++;
        continue;
      }
      switch (this.expect) {
        case 'open':
          if (byte !== OPEN_BRACKET) {
            this.kind = 'other';
            this.expect = 'nothing';
            return;
          }
          this.kind = 'array';
          this.expect = 'element-or-close';
          pos++;
          break;
        case 'element-or-close':
        case 'element': {
          if (byte === CLOSE_BRACKET && this.expect === 'element-or-close') {
            this.expect = 'nothing';
            pos++;
            break;
          }
          if (byte === COMMA || byte === CLOSE_BRACKET) this.fail(byte, pos);
          const end = this.element(buf, pos, false);
          if (end === -1) return;
          this.expect = 'comma-or-close';
          pos = end;
          break;
        }
        case 'comma-or-close':
          if (byte === COMMA) this.expect = 'element';
          else if (byte === CLOSE_BRACKET) this.expect = 'nothing';
          else this.fail(byte, pos);
          pos++;
          break;
        case 'nothing':
          if (this.kind === 'other') return;
          this.fail(byte, pos);
      }
    }
  }

  private fail(byte: number, index: number): never {
    const what = JSON.stringify(String.fromCharCode(byte));
    throw new JsonSyntaxError(`unexpected ${what} at byte ${this.offset + index} of the array`);
  }
}
