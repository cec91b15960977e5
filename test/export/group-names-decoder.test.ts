/**
 * The export's read of group names leaves the members out of the parse, and gives the same ids
 * and names, the same refusals, as reading the groups whole, whatever their `users` lists hold
 * and wherever the answer is cut.
 */
import { describe, expect, it } from 'vitest';
import { recordDecoder, type AnswerDecoder } from '../../src/admin/answer-decoder.js';
import { groupNamesDecoder } from '../../src/export/group-names-decoder.js';
import { seededRandom } from '../../src/sandbox/ids.js';

const info = { method: 'GET', path: '/wf/restapi/v2/admin/groupManager' };

const LISTS = [
  '[]',
  '[ ]',
  '[1,2,3]',
  '[ 1 , 2 ]',
  '[\n4,\n5\n]',
  '[01]',
  '[1,]',
  '[,1]',
  '[1 2]',
  '[-1]',
  '[1.5]',
  '[1e3]',
  '[123456789012345]',
  '[1234567890123456]',
  '["7"]',
  '[[1]]',
  '[0]',
  '[0,10]',
];

function group(random: () => number, index: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const list = pick(LISTS);
  const roll = random();
  const name = JSON.stringify(roll < 0.1 ? `x\\"users":[9]` : `Group ${index}`);
  if (roll < 0.15)
    return `{"id":${index},"name":${name},"description":"a\\"users\\":[1]","users":${list}}`;
  if (roll < 0.2) return `{"id":${index},"users":${list},"name":${name},"users":[2]}`;
  if (roll < 0.25) return `{"id":${index},"name":${name},"extra":{"users":${list}}}`;
  if (roll < 0.3) return `{"name":${name},"users":${list}}`;
  if (roll < 0.33) return `{"id":${index},"name":${name},"users" : ${list}}`;
  return `{"id":${index},"name":${name},"hidden":false,"users":${list}}`;
}

function read<T>(decoder: AnswerDecoder<T[]>, chunks: Buffer[]): { values: T[]; failed: boolean } {
  const values: T[] = [];
  try {
    for (const chunk of chunks) {
      const decoded = decoder.write(chunk);
      if (decoded.value) values.push(...decoded.value);
      if (decoded.fault) throw decoded.fault;
    }
    decoder.end();
    return { values, failed: false };
  } catch {
    return { values, failed: true };
  }
}

describe('group names without their members', () => {
  it('gives the ids, names and refusals of a whole read, over 500 random answers', () => {
    const random = seededRandom(21);
    let plain = 0;
    for (let round = 0; round < 500; round++) {
      const count = 1 + Math.floor(random() * 5);
      const bytes = Buffer.from(
        `[${Array.from({ length: count }, (_, index) => group(random, index + 1)).join(',')}]`,
      );
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length;) {
        const size = 1 + Math.floor(random() * 60);
        chunks.push(bytes.subarray(at, at + size));
        at += size;
      }
      const whole = read(recordDecoder('groups', info), chunks);
      const names = read(groupNamesDecoder(info), chunks);
      expect(names.failed, bytes.toString()).toBe(whole.failed);
      const idAndName = (records: Record<string, unknown>[]) =>
        records.map((record) => [record.id, record.name]);
      expect(idAndName(names.values), bytes.toString()).toEqual(idAndName(whole.values));
      if (!whole.failed) plain++;
    }
    expect(plain).toBeGreaterThan(100);
  });

  it('leaves the members out of what it keeps', () => {
    const decoder = groupNamesDecoder(info);
    const decoded = decoder.write(
      Buffer.from('[{"id":1,"name":"A","users":[1,2,3]},{"id":2,"name":"B","users":[]}]'),
    );
    decoder.end();
    expect(decoded.value).toEqual([
      { id: 1, name: 'A', users: [] },
      { id: 2, name: 'B', users: [] },
    ]);
  });
});
