/**
 * The synchronous evaluator against the `jsonata` package, on expressions a seeded generator
 * makes from every function and operator the synchronous evaluator knows, over rows whose
 * columns are missing, null, numbers, text, booleans, lists and objects. For each expression and row,
 * the synchronous evaluator must give JSONata's value, or fail as JSONata does (the same error
 * code, or the same message for porter's own functions), or hand the record to JSONata.
 */
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../src/mapping/compile.js';
import { GIVE_UP } from '../../src/mapping/fast-path.js';
import { ValueTables } from '../../src/mapping/tables.js';
import { UniqueNames } from '../../src/mapping/unique-names.js';
import { seededRandom } from '../helpers/random.js';

const SEED = Number(process.env.PORTER_DIFF_SEED ?? 20_270_301);
const EXPRESSIONS = 600;

const ROWS: ReadonlyArray<Record<string, unknown>> = [
  {
    s: 'Hello World',
    t: 'x@y',
    e: '',
    n: 3,
    f: -2.5,
    z: null,
    b: true,
    l: ['a', 'b'],
    o: { s: 'Ada', n: 2, z: null, b: false, l: ['x'], p: { q: 'deep' }, 'u:v': 'urn' },
  },
  {
    s: 'abc',
    t: '',
    e: '',
    n: 0,
    f: 1.5,
    z: null,
    b: false,
    l: [],
    o: [{ s: 'one' }, { s: 'two' }],
  },
  { s: ' José  Müller ', t: 'a,b', n: 12, l: ['x'], o: 'text' },
  { o: { p: [{ q: 'a' }], s: '' } },
  {},
];

/** Leaves: columns of every kind (m is never present), literals, the row number. */
const LEAVES = [
  's',
  't',
  'e',
  'n',
  'f',
  'z',
  'b',
  'l',
  'm',
  'Missing',
  "'1'",
  "'@'",
  "''",
  "'World'",
  '0',
  '1',
  '2',
  '-1',
  '1.5',
  'true',
  'null',
  '$row',
  "['a', 'b']",
  // fields of nested objects (a SCIM resource's name.givenName, an extension's field)
  'o.s',
  'o.n',
  'o.z',
  'o.b',
  'o.l',
  'o.p.q',
  'o.m',
  'o.p',
  '`o`.`u:v`',
  's.x',
  'm.x',
];

/** Functions with the arities the synchronous evaluator takes. */
const FUNCTIONS: ReadonlyArray<[string, number[]]> = [
  ['lowercase', [1]],
  ['uppercase', [1]],
  ['trim', [1]],
  ['substringBefore', [2]],
  ['substringAfter', [2]],
  ['substring', [2, 3]],
  ['length', [1]],
  ['contains', [2]],
  ['join', [1, 2]],
  ['string', [1]],
  ['exists', [1]],
  ['boolean', [1]],
  ['not', [1]],
  ['normalizeDiacritics', [1]],
  ['table', [2, 3]],
];

const BINARY = ['&', '=', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'and', 'or', 'in'];

function generator(seed: number): () => string {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const expression = (depth: number): string => {
    const roll = random();
    if (depth <= 0 || roll < 0.25) return pick(LEAVES);
    if (roll < 0.6) {
      const [name, arities] = pick(FUNCTIONS);
      const arity = pick(arities);
      const args = Array.from({ length: arity }, () => expression(depth - 1));
      if (name === 'table') args[0] = "'t'";
      return `$${name}(${args.join(', ')})`;
    }
    if (roll < 0.85) return `(${expression(depth - 1)} ${pick(BINARY)} ${expression(depth - 1)})`;
    if (roll < 0.92)
      return `(${expression(depth - 1)} ? ${expression(depth - 1)} : ${expression(depth - 1)})`;
    if (roll < 0.96) return `-${expression(depth - 1)}`;
    return `[${expression(depth - 1)}, ${expression(depth - 1)}]`;
  };
  return () => expression(3);
}

function scope(): { tables: ValueTables; names: UniqueNames } {
  return {
    tables: new ValueTables({ t: { values: { a: ['x', 'y'], hello: 'z', '3': 'three' } } }),
    names: new UniqueNames(),
  };
}

type Answer = { value: string } | { error: string } | { handedOver: true };

function errorOf(error: unknown): { error: string } {
  const failure = error as { code?: unknown; message?: unknown };
  return {
    error: typeof failure.code === 'string' ? failure.code : String(failure.message ?? error),
  };
}

async function jsonataAnswer(source: string, row: Record<string, unknown>, rowNumber: number) {
  const compiled = compileExpression('fields.x', source, scope);
  try {
    const value: unknown = await compiled.jsonata.evaluate(row, { row: rowNumber });
    return { value: JSON.stringify(value) ?? 'undefined' };
  } catch (error) {
    return errorOf(error);
  }
}

function fastAnswer(source: string, row: Record<string, unknown>, rowNumber: number): Answer {
  const compiled = compileExpression('fields.x', source, scope);
  if (compiled.fast === undefined) return { handedOver: true };
  try {
    const value = compiled.fast({ row, rowNumber, scope: scope() });
    return { value: JSON.stringify(value) ?? 'undefined' };
  } catch (error) {
    if (error === GIVE_UP) return { handedOver: true };
    return errorOf(error);
  }
}

describe('the synchronous evaluator against JSONata, on generated expressions', () => {
  it(`agrees on ${EXPRESSIONS} expressions × ${ROWS.length} rows (seed ${SEED})`, async () => {
    const next = generator(SEED);
    const seen = new Set<string>();
    const disagreements: string[] = [];
    let answered = 0;
    let failedAlike = 0;
    while (seen.size < EXPRESSIONS) {
      const source = next();
      if (seen.has(source)) continue;
      seen.add(source);
      for (const [index, row] of ROWS.entries()) {
        const fast = fastAnswer(source, row, index + 1);
        if ('handedOver' in fast) continue;
        const expected = await jsonataAnswer(source, row, index + 1);
        answered++;
        if ('error' in fast) failedAlike++;
        if (JSON.stringify(fast) !== JSON.stringify(expected)) {
          disagreements.push(
            `${source} on row ${index + 1}: fast ${JSON.stringify(fast)}, JSONata ${JSON.stringify(expected)}`,
          );
        }
      }
    }
    expect(disagreements.slice(0, 20)).toEqual([]);
    // the synchronous evaluator answers most cases itself, errors included
    expect(answered).toBeGreaterThan(EXPRESSIONS);
    expect(failedAlike).toBeGreaterThan(10);
  });

  it.each([
    '$substring(MissingColumn, "1")',
    '$substringBefore(MissingColumn, 1)',
    '$substringAfter(MissingColumn, true)',
    '$contains(MissingColumn, 2)',
    '$join(MissingColumn, 3)',
    '$substring(MissingColumn, 0, "2")',
  ])('%s fails as JSONata does (T0410), not with "no value"', async (source) => {
    const expected = await jsonataAnswer(source, {}, 1);
    expect(expected).toEqual({ error: 'T0410' });
    const fast = fastAnswer(source, {}, 1);
    expect(fast).not.toEqual({ value: 'undefined' });
  });
});

describe('fields of nested objects', () => {
  const scim = {
    userName: 'ada',
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Maths' },
    emails: [{ value: 'ada@example.com', primary: true }],
  };

  it.each([
    ['name.givenName', '"Ada"'],
    ["name.givenName & ' ' & name.familyName", '"Ada Lovelace"'],
    ['`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`.department', '"Maths"'],
    ['name.middleName', 'undefined'],
    ['title.x', 'undefined'],
  ])('%s is answered without JSONata, as JSONata answers it', async (source, value) => {
    expect(fastAnswer(source, scim, 1)).toEqual({ value });
    expect(await jsonataAnswer(source, scim, 1)).toEqual({ value });
  });

  it('a list on the way is left to JSONata, which maps over it', async () => {
    expect(fastAnswer('emails.value', scim, 1)).toEqual({ handedOver: true });
    expect(await jsonataAnswer('emails.value', scim, 1)).toEqual({ value: '"ada@example.com"' });
  });
});

describe('$primaryValue, the value of a multi-valued attribute', () => {
  const rows: Array<Record<string, unknown>> = [
    {
      emails: [
        { value: 'home@example.com', type: 'home' },
        { value: 'work@example.com', type: 'work' },
        { value: 'main@example.com', primary: true },
      ],
    },
    { emails: [{ value: 'home@example.com', type: 'home' }, { type: 'work' }] },
    { emails: [{ value: 'only@example.com' }] },
    { emails: { value: 'one@example.com', type: 'work' } },
    { emails: [] },
    { emails: 'text' },
    { emails: [{ value: 'a' }, 'text'] },
    { emails: [[{ value: 'nested' }]] },
    { user: { emails: [{ value: 'deep@example.com', primary: true }] } },
    {},
  ];

  it.each([
    "$primaryValue(emails, 'work')",
    '$primaryValue(emails)',
    "$primaryValue(user.emails, 'work')",
    "$contains($primaryValue(emails, 'work'), '@') ? $primaryValue(emails, 'work')",
  ])('%s: the synchronous evaluator answers as JSONata does', async (source) => {
    const answered: string[] = [];
    for (const [index, row] of rows.entries()) {
      const fast = fastAnswer(source, row, index + 1);
      if ('handedOver' in fast) continue;
      expect(fast, `row ${index + 1}`).toEqual(await jsonataAnswer(source, row, index + 1));
      answered.push(JSON.stringify(fast));
    }
    expect(answered.length).toBeGreaterThanOrEqual(7);
  });

  it('picks the primary item, else the given type, else the first with a value', async () => {
    const picks = await Promise.all(
      rows.slice(0, 5).map((row) => jsonataAnswer("$primaryValue(emails, 'work')", row, 1)),
    );
    expect(picks).toEqual([
      { value: '"main@example.com"' },
      { value: '"home@example.com"' },
      { value: '"only@example.com"' },
      { value: '"one@example.com"' },
      { value: 'undefined' },
    ]);
    expect(fastAnswer("$primaryValue(emails, 'work')", rows[5]!, 1)).toEqual({
      error: '$primaryValue: the items must be objects with a value',
    });
  });
});
