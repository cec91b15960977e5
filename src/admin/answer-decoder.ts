/**
 * A reader of a GET answer's bytes as they arrive (AdminClient.streamDecoded): the records of a
 * JSON array, checked (recordDecoder), or anything else made straight from the bytes.
 */
import { checkReadRecords } from './answers.js';
import { JsonArraySplitter } from './json-array-splitter.js';
import type { ResourceName, ResourceRecordMap } from './resources.js';

export interface Decoded<T> {
  /** What the chunk completed, if anything. */
  value?: T;
  /** Records it holds, for the call's span and events. */
  records: number;
  /** The answer is wrong from here on: thrown once `value` is used. */
  fault?: unknown;
}

export interface AnswerDecoder<T> {
  /** What the answer's first non-blank byte said: an array, something else, or not seen yet. */
  readonly kind: 'unknown' | 'array' | 'other';
  write(chunk: Buffer): Decoded<T>;
  /** The answer ended: throws when an array began and was not closed. */
  end(): void;
}

/** The records each chunk completes, checked against the GET answer schema. */
export function recordDecoder<R extends ResourceName>(
  resource: R,
  info: { method: string; path: string },
): AnswerDecoder<ResourceRecordMap[R][]> {
  const splitter = new JsonArraySplitter();
  return {
    get kind() {
      return splitter.kind;
    },
    write(chunk) {
      const records = splitter.write(chunk);
      if (records.length === 0) return { records: 0 };
      const { checked, fault } = checkReadRecords(resource, records, info);
      const value = checked === records.length ? records : records.slice(0, checked);
      return {
        ...(checked > 0 ? { value: value as ResourceRecordMap[R][] } : {}),
        records: checked,
        fault,
      };
    },
    end: () => splitter.end(),
  };
}
