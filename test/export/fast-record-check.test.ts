/**
 * The fast check behind AdminClient.streamBatches(): whenever it says yes, zod accepts the
 * record and gives back the same record, keys in the same order; whatever zod refuses, it
 * leaves to zod. Checked against zod itself on thousands of mutated answer records.
 */
import { describe, expect, it } from 'vitest';
import { RESOURCES, RESOURCE_NAMES, type ResourceName } from '../../src/admin/resources.js';
import { compileRecordCheck, isUnderstood } from '../../src/admin/fast-record-check.js';
import { seededRandom } from '../../src/sandbox/ids.js';

const VALID: Record<ResourceName, Record<string, unknown>> = {
  users: {
    userId: 7,
    username: 'ann',
    firstName: 'Ann',
    middleName: '',
    email: 'ann@example.com',
    type: null,
    status: 'Active',
    primaryGroup: 3,
    groups: [3, 4],
    substitutionMap: { a: 1, b: [2] },
  },
  groups: { id: 3, name: 'Editors', hidden: false, priority: 1, acls: ['x'], users: [7] },
  acls: { id: 'acl-1', name: 'Read', groupId: 3, workspaces: ['w'], searchFilter: null },
};

/** Values of every JSON kind, and the edges of the number and string checks. */
const ODD_VALUES: unknown[] = [
  '',
  'text',
  0,
  -0,
  1.5,
  -3,
  2 ** 53,
  2 ** 53 - 1,
  1e300,
  true,
  null,
  [],
  [1, 'a'],
  ['a'],
  [1.5],
  {},
  { k: 1 },
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** The record changed in one to three random ways: a value, a key gone, an unknown key, order. */
function mutate(random: () => number, record: Record<string, unknown>): Record<string, unknown> {
  let entries = Object.entries(structuredClone(record));
  const fields = Object.keys(RESOURCES[pick(random, RESOURCE_NAMES)].fields);
  for (let change = 0; change < 1 + Math.floor(random() * 3); change++) {
    const roll = random();
    if (roll < 0.4 && entries.length > 0) {
      pick(random, entries)[1] = pick(random, ODD_VALUES);
    } else if (roll < 0.55 && entries.length > 0) {
      entries.splice(Math.floor(random() * entries.length), 1);
    } else if (roll < 0.7) {
      const key = pick(random, ['extra', '1', '__proto__', ...fields]);
      const at = random() < 0.5 ? 0 : entries.length;
      entries.splice(at, 0, [key, pick(random, ODD_VALUES)]);
    } else if (roll < 0.85 && entries.length > 1) {
      entries = [...entries.slice(1), entries[0]!];
    } else {
      const [key] = pick(random, entries.length > 0 ? entries : [['x', 0]]);
      entries.push([key, pick(random, ODD_VALUES)]);
    }
  }
  // through JSON, as an answer arrives: a `__proto__` key stays an own key, as JSON.parse makes it
  const text = `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`;
  return JSON.parse(text) as Record<string, unknown>;
}

describe('compileRecordCheck', () => {
  it('understands every GET and write answer schema, so exports and imports take the fast path', () => {
    for (const resource of RESOURCE_NAMES) {
      for (const schema of [
        RESOURCES[resource].readAnswerSchema,
        RESOURCES[resource].writeAnswerSchema,
      ]) {
        expect(isUnderstood(schema)).toBe(true);
        expect(compileRecordCheck(schema)(VALID[resource])).toBe(true);
      }
    }
  });

  it.each(['readAnswerSchema', 'writeAnswerSchema'] as const)(
    'says yes only to records zod gives back unchanged, over 6000 mutated records (%s)',
    (which) => {
      const random = seededRandom(11);
      let yes = 0;
      let no = 0;
      for (let round = 0; round < 6000; round++) {
        const resource = RESOURCE_NAMES[round % 3]!;
        const schema = RESOURCES[resource][which];
        const record = mutate(random, VALID[resource]);
        const parsed = schema.safeParse(record);
        if (compileRecordCheck(schema)(record)) {
          yes++;
          expect(parsed.success).toBe(true);
          expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(record));
        } else {
          no++;
        }
      }
      // both answers are common, so both kinds of record were really tried
      expect(yes).toBeGreaterThan(500);
      expect(no).toBeGreaterThan(500);
    },
  );

  it.each([
    ['a record that is not an object', [1]],
    ['a missing id', { username: 'ann' }],
    ['an id of the wrong type', { userId: '7' }],
    ['a key out of spec order', { username: 'ann', userId: 7 }],
    ['an unknown key before a known one', { extra: 1, userId: 7 }],
    // zod's copy of the map would lose the key
    [
      'a map with an own __proto__ key',
      JSON.parse('{"userId":7,"substitutionMap":{"__proto__":{}}}'),
    ],
  ])('leaves %s to zod', (_label, record) => {
    expect(compileRecordCheck(RESOURCES.users.readAnswerSchema)(record)).toBe(false);
  });

  it('leaves everything to zod for a schema it does not understand', () => {
    const check = compileRecordCheck(RESOURCES.users.schema.refine(() => true));
    expect(check(VALID.users)).toBe(false);
  });
});
