/** A Writable that takes one chunk per event-loop turn and notes any write made while it asked to drain. */
import { Writable } from 'node:stream';

export interface SlowWritable {
  writable: Writable;
  text(): string;
  /** Writes made after write() returned false and before 'drain': must stay 0. */
  violations(): number;
}

export function slowWritable(highWaterMark = 256): SlowWritable {
  const chunks: Buffer[] = [];
  let violations = 0;
  const writable = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      setImmediate(callback);
    },
  });
  const write = writable.write.bind(writable) as (...args: unknown[]) => boolean;
  writable.write = ((...args: unknown[]) => {
    if (writable.writableNeedDrain) violations++;
    return write(...args);
  }) as Writable['write'];
  return {
    writable,
    text: () => Buffer.concat(chunks).toString('utf8'),
    violations: () => violations,
  };
}

/** Results pulled from a generator, to check a writer does not read far ahead of the output. */
export function countingSource<T>(items: T[]): { source: AsyncGenerator<T>; pulled(): number } {
  let pulled = 0;
  async function* source(): AsyncGenerator<T> {
    for (const item of items) {
      pulled++;
      yield item;
    }
  }
  return { source: source(), pulled: () => pulled };
}
