/**
 * The splitter behind AdminClient.stream(): any chunking of any JSON array gives exactly what
 * JSON.parse gives, and a malformed array is an error, never a silent partial answer.
 */
import { describe, expect, it } from 'vitest';
import { JsonArraySplitter, JsonSyntaxError } from '../../src/admin/json-array-splitter.js';
import { seededRandom } from '../../src/sandbox/ids.js';

function split(text: string, random: () => number, maxChunk: number): unknown[] {
  const bytes = Buffer.from(text, 'utf8');
  const splitter = new JsonArraySplitter();
  const values: unknown[] = [];
  for (let offset = 0; offset < bytes.length;) {
    const size = 1 + Math.floor(random() * maxChunk);
    values.push(...splitter.write(bytes.subarray(offset, offset + size)));
    offset += size;
  }
  splitter.end();
  expect(splitter.kind).toBe('array');
  return values;
}

const PIECES = ['a', '"', '\\', '{', '}', '[', ']', ',', ' ', 'é', '€', '😀', '\n', '\\u0041', ':'];

function randomValue(random: () => number, depth = 0): unknown {
  const roll = random();
  if (depth > 3 || roll < 0.3) {
    const kind = Math.floor(random() * 5);
    if (kind === 0) return Math.floor(random() * 2000) - 1000 + (random() < 0.3 ? 0.5 : 0);
    if (kind === 1) return random() < 0.5;
    if (kind === 2) return null;
    return Array.from(
      { length: Math.floor(random() * 8) },
      () => PIECES[Math.floor(random() * PIECES.length)],
    ).join('');
  }
  if (roll < 0.5) {
    return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  }
  const record: Record<string, unknown> = {};
  for (let index = 0; index < Math.floor(random() * 5); index++) {
    record[`k${index}${PIECES[Math.floor(random() * PIECES.length)]}`] = randomValue(
      random,
      depth + 1,
    );
  }
  return record;
}

describe('JsonArraySplitter', () => {
  it('gives what JSON.parse gives, for 300 random arrays in random chunks, compact or pretty', () => {
    const random = seededRandom(7);
    for (let round = 0; round < 300; round++) {
      const array = Array.from({ length: Math.floor(random() * 12) }, () => randomValue(random));
      const text = JSON.stringify(array, null, round % 3 === 0 ? 2 : undefined);
      expect(split(text, random, [3, 64, 400][round % 3]!)).toEqual(JSON.parse(text));
    }
  });

  it('reads records whose strings and nested values hold braces, in chunks of any size', () => {
    const random = seededRandom(3);
    const records = Array.from({ length: 400 }, (_, index) => ({
      id: index,
      name: `n${'}'.repeat(index % 3)},{"x":1}`,
      nested: { list: [{}, { a: '}' }], deep: { z: index % 2 === 0 ? {} : [] } },
    }));
    const text = JSON.stringify(records, null, records.length % 2 === 0 ? undefined : 1);
    for (const maxChunk of [5, 100, 1000, 5000]) {
      expect(split(text, random, maxChunk)).toEqual(records);
    }
  });

  it.each([
    ['a missing comma', ['[{"a":1}', '{"b":2}]'], /unexpected "\{"/],
    ['a value after the array', ['[{"a":1}', '] {}'], /unexpected "\{"/],
    ['a stray byte, at its place in the answer', ['[{"a":1},', '{"b":2} x]'], /"x" at byte 17/],
  ])('finds %s at a chunk boundary', (_label, chunks, message) => {
    const splitter = new JsonArraySplitter();
    expect(() => {
      for (const chunk of chunks) splitter.write(Buffer.from(chunk));
      splitter.end();
    }).toThrow(message);
  });

  it('reads blanks and the comma between two chunks', () => {
    const splitter = new JsonArraySplitter();
    const values = ['[{"a":1} ', ' \n, {"b":2}', ' ]'].flatMap((chunk) =>
      splitter.write(Buffer.from(chunk)),
    );
    splitter.end();
    expect(values).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('names the element at fault among many in one chunk', () => {
    const splitter = new JsonArraySplitter();
    splitter.write(Buffer.from('['));
    expect(() => splitter.write(Buffer.from('{"a":1},{"b":},{"c":3}]'))).toThrow(/not valid JSON/);
  });

  it('reads bare values and strings as elements', () => {
    expect(split(' [1, -2.5e3 ,true,null, "x,]" , false]\n', Math.random, 2)).toEqual([
      1,
      -2500,
      true,
      null,
      'x,]',
      false,
    ]);
  });

  it.each([
    ['[1,]', /unexpected "\]"/],
    ['[,1]', /unexpected ","/],
    ['[{"a":1}{"b":2}]', /unexpected "\{"/],
    ['[1 2]', /unexpected "2"/],
    ['[] []', /unexpected "\["/],
    ['[{"a":1}', /ended before its array closed/],
    ['[{"a":}]', /not valid JSON/],
    ['[tru]', /not valid JSON/],
    ['[{"a":1},{"b":2}] {}', /unexpected "\{"/],
    ['[{"a":1},{"b":2}},{"c":3}]', /not valid JSON|unexpected/],
  ])('%s is an error', (text, message) => {
    const splitter = new JsonArraySplitter();
    expect(() => {
      splitter.write(Buffer.from(text));
      splitter.end();
    }).toThrow(JsonSyntaxError);
    const again = new JsonArraySplitter();
    expect(() => {
      again.write(Buffer.from(text));
      again.end();
    }).toThrow(message);
    // the array opened in an earlier chunk: the rest may be guessed at, and still fails
    const later = new JsonArraySplitter();
    expect(() => {
      later.write(Buffer.from(text.slice(0, 1)));
      later.write(Buffer.from(text.slice(1)));
      later.end();
    }).toThrow(message);
  });

  it('says when the answer is not an array at all, and stops reading it', () => {
    const splitter = new JsonArraySplitter();
    expect(splitter.write(Buffer.from('{"errorcode":"E"}'))).toEqual([]);
    expect(splitter.kind).toBe('other');
    splitter.end();
    const empty = new JsonArraySplitter();
    empty.end();
    expect(empty.kind).toBe('unknown');
  });
});
