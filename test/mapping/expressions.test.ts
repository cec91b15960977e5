import { describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { ingest, loadMapping, type IngestItem } from '../../src/ingest/index.js';
import { compileExpression } from '../../src/mapping/compile.js';
import { GIVE_UP } from '../../src/mapping/fast-path.js';
import { ValueTables } from '../../src/mapping/tables.js';
import { UniqueNames } from '../../src/mapping/unique-names.js';
import { formatDate, parseDate } from '../../src/mapping/dates.js';
import { normalizeDiacritics } from '../../src/mapping/diacritics.js';

async function items(
  text: string,
  mapping: unknown,
  directory?: Array<Record<string, unknown>>,
): Promise<IngestItem[]> {
  const run = ingest(Buffer.from(text), {
    resource: 'users',
    mode: 'upsert',
    mapping: loadMapping(mapping, 'users'),
    directory:
      directory &&
      async function* () {
        yield* directory;
      },
  });
  const all: IngestItem[] = [];
  for await (const item of run.items) all.push(item);
  return all;
}

function refusal(mapping: unknown): PorterError {
  try {
    loadMapping(mapping, 'users');
  } catch (error) {
    if (error instanceof PorterError) return error;
    throw error;
  }
  throw new Error('expected the mapping to be refused');
}

function outcome(item: IngestItem): unknown {
  if (item.kind === 'record') return item.record;
  if (item.kind === 'skipped') return { skipped: item.reason };
  return { code: item.errorCode, field: item.field, error: item.error };
}

const HR = [
  'Employee Email,Given Name,Family Name,Dept Code,Employment Status,Worker Type',
  'Jose.Muller@acme.example,José,Müller,MKT-04,Active,Employee',
  'maria.garcia@acme.example,Maria,García,ENG-01,Active,Employee',
  'maria.garcia2@acme.example,Maria,García,MKT-04,Terminated,Employee',
  'chloe@acme.example,Chloé,Dubois,ENG-01,Active,Contractor',
].join('\n');

const HR_MAPPING = {
  when: "`Worker Type` != 'Contractor'",
  fields: {
    username:
      "$unique([$lowercase($normalizeDiacritics($substring(`Given Name`, 0, 1) & `Family Name`)), $lowercase($normalizeDiacritics(`Given Name` & '.' & `Family Name`))])",
    email: '$lowercase(`Employee Email`)',
    status: "`Employment Status` = 'Terminated' ? 'Locked' : 'Active'",
    groups: "$table('departments', `Dept Code`)",
  },
  tables: {
    departments: { values: { 'MKT-04': ['Marketing', 'Staff'], 'ENG-01': 'Engineering' } },
  },
  defaults: { type: 'General User' },
};

describe('mapping expressions', () => {
  it('compute fields from an HR export: names, tables, statuses, skipped rows', async () => {
    const result = (await items(HR, HR_MAPPING)).map(outcome);
    expect(result).toEqual([
      {
        username: 'jmuller',
        email: 'jose.muller@acme.example',
        status: 'Active',
        groups: ['Marketing', 'Staff'],
        type: 'General User',
      },
      {
        username: 'mgarcia',
        email: 'maria.garcia@acme.example',
        status: 'Active',
        groups: ['Engineering'],
        type: 'General User',
      },
      {
        username: 'maria.garcia',
        email: 'maria.garcia2@acme.example',
        status: 'Locked',
        groups: ['Marketing', 'Staff'],
        type: 'General User',
      },
      { skipped: 'skipped: "when" is false (`Worker Type` != \'Contractor\')' },
    ]);
  });

  it('$unique skips names on the server, except the same person’s own with a match', async () => {
    const mapping = {
      fields: {
        username:
          "$unique([$lowercase(`Given Name`), $lowercase(`Given Name`) & '2', $lowercase(`Given Name`) & '3'], {'email': Email})",
        email: 'Email',
      },
    };
    const text =
      'Given Name,Email\nAnn,ann.new@x.example\nBob,bob@x.example\nAnn,ann.other@x.example\n';
    const directory = [
      { username: 'ANN', email: 'ann.old@x.example' },
      { username: 'bob', email: 'Bob@X.example' },
    ];
    const result = (await items(text, mapping, directory)).map(outcome);
    expect(result).toEqual([
      { username: 'ann2', email: 'ann.new@x.example' },
      // bob on the server is this row's person (same email): the name is kept
      { username: 'bob', email: 'bob@x.example' },
      { username: 'ann3', email: 'ann.other@x.example' },
    ]);
    const none = await items(
      'Given Name,Email\nAnn,a@x\n',
      {
        fields: { username: "$unique(['ann', 'Ann'])" },
      },
      [{ username: 'ann' }],
    );
    expect(outcome(none[0]!)).toMatchObject({
      code: 'PORTER_MAPPING_FAILED',
      field: 'username',
      error: expect.stringMatching(/every candidate is taken \(ann, Ann\)/),
    });
  });

  it("$unique's refusal names the first few candidates and counts the rest", async () => {
    const candidates = Array.from({ length: 10_000 }, (_, index) => `name${index}`);
    const directory = candidates.map((username) => ({ username }));
    const [item] = await items(
      'Given Name\nAnn\n',
      { fields: { username: `$unique([${candidates.map((name) => `'${name}'`).join(',')}])` } },
      directory,
    );
    const error = (outcome(item!) as { error: string }).error;
    expect(error).toContain(
      'every candidate is taken (name0, name1, name2, name3, name4, and 9995 more)',
    );
    expect(error.length).toBeLessThan(300);
  });

  it('a syntax error is refused with its field, expression and position', () => {
    const error = refusal({ fields: { username: '$lowercase(`Given Name`' } });
    expect(error.code).toBe('PORTER_MAPPING_INVALID');
    expect(error.exitCode).toBe(65);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(
      /fields\.username: syntax error: .*position 23.*"\$lowercase\(`Given Name`"/,
    );
    expect(error.details).toMatchObject({ field: 'fields.username', position: 23 });
    expect(refusal({ when: 'a =' }).message).toMatch(/^Mapping file: when: syntax error/);
    expect(refusal({ fields: { nickname: "'x'" } }).message).toMatch(/not a field of users/);
    expect(refusal({ fields: { username: "$table('teams', a)" } }).message).toMatch(
      /no table "teams" \(tables: none\)/,
    );
    expect(refusal({ columns: { Login: 'username' }, fields: { username: 'a' } }).message).toMatch(
      /both computed/,
    );
  });

  it('refuses expressions that reach for prototypes or $eval', () => {
    for (const source of [
      'constructor',
      'a.__proto__',
      'a.`__proto__`.polluted',
      'Login.prototype',
    ]) {
      expect(refusal({ fields: { username: source } }).message).toMatch(/cannot be read/);
    }
    expect(refusal({ fields: { username: "$eval('1')" } }).message).toMatch(
      /\$eval is not available/,
    );
  });

  it('dynamic prototype lookups give nothing and pollute nothing', async () => {
    const result = await items('Login\nann\n', {
      fields: {
        username: "$lookup($, 'constructor') ? 'reached' : Login",
        city: "$string($lookup($lookup($, '__proto__'), 'toString'))",
        substitutionMap: "{'__proto__': {'polluted': 'yes'}}",
      },
    });
    expect(result[0]!.kind).toBe('record');
    const record = (result[0] as Extract<IngestItem, { kind: 'record' }>).record;
    expect(record.username).toBe('ann');
    expect(record.city).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a runtime error, or a missing table key, fails its record alone', async () => {
    const mapping = {
      fields: {
        username: 'Login',
        position: '$substring(Title, $number(Start))',
        groups: "$table('teams', Team)",
        dept: "$table('depts', Team)",
      },
      tables: {
        teams: { values: { A: 'Alpha' } },
        depts: { values: { A: 'Dept A' }, default: 'Other' },
      },
    };
    const text = 'Login,Title,Start,Team\nann,Engineer,0,A\nbob,Engineer,x,A\ncid,Analyst,0,Z\n';
    const result = (await items(text, mapping)).map(outcome);
    expect(result[0]).toMatchObject({ username: 'ann', groups: ['Alpha'], dept: 'Dept A' });
    expect(result[1]).toMatchObject({
      code: 'PORTER_MAPPING_FAILED',
      field: 'position',
      error: expect.stringMatching(/^row 2: field "position": .*number/),
    });
    expect(result[2]).toMatchObject({
      code: 'PORTER_MAPPING_FAILED',
      field: 'groups',
      error: expect.stringMatching(/table "teams" has no key "Z" and no default/),
    });
    // with a default, a missing key gives it
    const withDefault = (
      await items(text, {
        ...mapping,
        fields: { username: 'Login', dept: "$table('depts', Team)" },
      })
    ).map(outcome);
    expect(withDefault[2]).toMatchObject({ username: 'cid', dept: 'Other' });
  });

  it('an expression that loops or builds a huge text fails its records, and is given up after a few', async () => {
    const rows = Array.from({ length: 6 }, (_, index) => `user${index}`).join('\n');
    const looping = await items(`Login\n${rows}\n`, {
      fields: { username: 'Login', city: '($f := function($x){ $f($x + 1) }; $f(0))' },
    });
    for (const item of looping)
      expect(outcome(item)).toMatchObject({ code: 'PORTER_MAPPING_FAILED', field: 'city' });
    expect(outcome(looping[0]!)).toMatchObject({ error: expect.stringMatching(/stack|timeout/i) });
    expect(outcome(looping[5]!)).toMatchObject({
      error: expect.stringMatching(/not evaluated: .*rows 1, 2, 3/),
    });

    const huge = await items('Login\nann\n', {
      fields: {
        username: 'Login',
        city: "($f := function($s, $n){ $n = 0 ? $s : $f($s & $s, $n - 1) }; $f('x', 40))",
        position: "$pad('x', 100000000)",
      },
    });
    expect(outcome(huge[0]!)).toMatchObject({
      code: 'PORTER_MAPPING_FAILED',
      field: 'city',
      error: expect.stringMatching(/more than 65536 characters/),
    });
    const padded = await items('Login\nann\n', {
      fields: { username: 'Login', position: "$pad('x', 100000000)" },
    });
    expect(outcome(padded[0]!)).toMatchObject({
      field: 'position',
      error: expect.stringMatching(/more than 65536/),
    });
    const ranged = await items('Login\nann\n', {
      fields: { username: 'Login', position: '$string($count([1..100000000]))' },
    });
    expect(outcome(ranged[0]!)).toMatchObject({ code: 'PORTER_MAPPING_FAILED', field: 'position' });
  });

  it('columns, ignore and defaults keep working beside fields; unmatched columns feed expressions', async () => {
    const result = await items('Login,Mail,Notes\nann,A@X.example,hello\n', {
      columns: { Login: 'username' },
      ignore: ['Notes'],
      defaults: { type: 'General User', city: 'Lyon' },
      fields: { email: '$lowercase(Mail)', position: "$row = 1 ? 'first' : 'later'" },
    });
    expect(outcome(result[0]!)).toEqual({
      username: 'ann',
      email: 'a@x.example',
      position: 'first',
      type: 'General User',
      city: 'Lyon',
    });
  });
});

describe('the synchronous evaluator', () => {
  const scope = () => ({
    tables: new ValueTables({ t: { values: { a: ['x', 'y'], b: 'z' }, default: 'd' } }),
    names: new UniqueNames(),
  });
  const ROWS: Array<Record<string, unknown>> = [
    { a: 'Hello World', b: '', n: 3, m: 0, t: true, z: null, 'Given Name': ' José  Müller ' },
    { a: 'x@y', b: 'b', n: -2.5, m: 7, t: false, z: null, 'Given Name': 'Ann' },
    {},
    { a: ['list'], n: '3' },
  ];
  const SOURCES = [
    'a',
    '`Given Name`',
    'missing',
    '$row',
    "a & '-' & b",
    'a & missing',
    'n & a',
    "a = 'x@y'",
    "a != 'x@y'",
    'missing = missing',
    "b ? 'yes' : 'no'",
    "missing ? 'yes'",
    'n > 2',
    'n < m',
    "a < 'b'",
    'n + m',
    'n * 2 - m / 1',
    'n % 2',
    'n + missing',
    '-n',
    'a and b',
    'b or t',
    't and n',
    "a in ['x@y', 'q']",
    'n in [3, 4]',
    "[a, b, missing, ['n']]",
    '$lowercase(a)',
    '$uppercase(`Given Name`)',
    '$trim(`Given Name`)',
    "$substringBefore(a, '@')",
    "$substringAfter(a, '@')",
    '$substring(a, 0, 1)',
    '$substring(a, -3)',
    '$substring(a, 2, -1)',
    '$length(`Given Name`)',
    "$contains(a, 'World')",
    "$join([a, b], '/')",
    '$join(a)',
    '$string(a)',
    '$string(n)',
    '$exists(missing)',
    '$not(b)',
    '$boolean(z)',
    '$normalizeDiacritics(`Given Name`)',
    "$table('t', 'a')",
    "$table('t', 'q')",
    "$table('t', 'q', 'given')",
    '$lowercase($substring(`Given Name`, 0, 1) & b)',
    '(a)',
  ];

  it('gives exactly what JSONata gives, or hands the record to JSONata', async () => {
    let fastAnswers = 0;
    for (const source of SOURCES) {
      const compiled = compileExpression('fields.x', source, scope);
      expect(compiled.fast, source).toBeDefined();
      for (const [index, row] of ROWS.entries()) {
        let expected: unknown;
        let expectedError: unknown;
        try {
          expected = await compiled.jsonata.evaluate(row, { row: index + 1 });
        } catch (error) {
          expectedError = error;
        }
        let actual: unknown;
        let actualError: unknown;
        try {
          actual = compiled.fast!({ row, rowNumber: index + 1, scope: scope() });
        } catch (error) {
          actualError = error;
        }
        if (actualError === GIVE_UP) continue;
        fastAnswers++;
        const what = `${source} on row ${index + 1}`;
        if (expectedError !== undefined) {
          expect(actualError, what).toBeDefined();
          continue;
        }
        expect(actualError, what).toBeUndefined();
        expect(JSON.stringify(actual), what).toBe(JSON.stringify(expected));
      }
    }
    expect(fastAnswers).toBeGreaterThan(SOURCES.length * 2);
  });
});

describe('porter functions', () => {
  it('normalize diacritics', () => {
    expect(normalizeDiacritics('José Müller')).toBe('Jose Muller');
    expect(normalizeDiacritics('Łukasz Øster Straße Ægir')).toBe('Lukasz Oster Strasse AEgir');
  });

  it('parse and format dates with an explicit format', () => {
    expect(parseDate('03/01/2027', 'MM/DD/YYYY')).toBe('2027-03-01');
    expect(parseDate('3.1.27 9:05', 'D.M.YY H:mm')).toBe('2027-01-03T09:05:00');
    expect(parseDate('', 'MM/DD/YYYY')).toBeUndefined();
    expect(() => parseDate('02/30/2027', 'MM/DD/YYYY')).toThrow(/not a real date/);
    expect(() => parseDate('2027-03-01', 'MM/DD/YYYY')).toThrow(/does not match/);
    expect(formatDate('2027-03-01', 'DD.MM.YYYY')).toBe('01.03.2027');
    expect(formatDate('03/01/2027', 'YYYY-MM-DD', 'MM/DD/YYYY')).toBe('2027-03-01');
  });
});
