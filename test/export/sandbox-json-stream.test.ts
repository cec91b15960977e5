/**
 * The sandbox's streamed answers (GET of all records, which exports read): byte for byte the
 * JSON array that one JSON.stringify gives, compact or pretty, whatever the number of records.
 */
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { jsonArray, jsonArrayStream } from '../../src/sandbox/json.js';

function records(count: number): unknown[] {
  return Array.from({ length: count }, (_, index) => ({
    id: index,
    name: `n${index}\n"é"`,
    list: index % 3 === 0 ? [] : [index, { nested: index % 2 === 0 ? {} : [1] }],
    none: null,
  }));
}

describe('jsonArrayStream', () => {
  it.each([0, 1, 255, 256, 257, 1000])(
    'gives what jsonArray gives for %i records',
    async (count) => {
      const all = records(count);
      for (const pretty of [false, true]) {
        // a generator, as the GET of all records hands them over
        const streamed = await text(jsonArrayStream(all.values(), pretty));
        expect(streamed).toBe(jsonArray(all, pretty));
      }
    },
  );
});
