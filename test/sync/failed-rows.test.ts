/**
 * A sync never takes a row that failed for one it left out: a record that fails for any reason
 * (a `when` or a field's expression that throws, validation) still names its key when the key
 * can be read, and a sync whose failed rows cannot be tied to a key is held, never written.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeSync } from '../../src/cli/sync.js';
import { loadMapping, type Mapping } from '../../src/ingest/index.js';
import { csv, type Pipeline } from '../helpers/pipeline.js';
import { outcomes, seedUsers, startSyncPipeline, status, writes } from './sync-fixture.js';

let pipeline: Pipeline;
const PEOPLE = ['ann', 'bob', 'cid', 'dee', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jon'];

beforeEach(async () => {
  pipeline = await startSyncPipeline();
  await seedUsers(pipeline, [
    ...PEOPLE.map((username) => ({ username, email: `${username}@x` })),
    { username: 'svc.porter' },
  ]);
});
afterEach(async () => {
  await pipeline?.close();
});

const TABLES = { depts: { values: { MKT: 'Marketing', ENG: 'Engineering' } } };

function sync(text: string, mapping: Mapping, maxDeletes = '100%') {
  return pipeline.run(
    text,
    { resource: 'users', mode: 'sync', sync: { missing: 'lock', maxDeletes } },
    { mapping },
  );
}

describe('failed rows in a sync', () => {
  it('rows whose `when` or field expression throws still name their users: none is locked', async () => {
    // `$number('x')` throws; the table has no key QA and no default
    const mapping = loadMapping(
      {
        when: '$number(Age) > 17',
        fields: { username: 'Login', groups: "$table('depts', Dept)" },
        tables: TABLES,
      },
      'users',
    );
    const rows = PEOPLE.map((login, index) => [
      login,
      index % 2 === 0 ? 'x' : '30',
      index % 2 === 0 ? 'MKT' : 'QA',
    ]);
    const before = writes(pipeline);
    const { info, results } = await sync(csv(['Login', 'Age', 'Dept'], rows), mapping);
    expect(info.state).toBe('completed_with_errors');
    expect(info.sync).toMatchObject({ locks: 0, held: false });
    expect(info.sync?.unnamed).toBeUndefined();
    const byKey = outcomes(results);
    for (const login of PEOPLE) expect(byKey[login]).toMatch(/^failed/);
    // porter's own account, never touched, is the one record only on the server
    expect(Object.keys(byKey).filter((key) => key.endsWith('*'))).toEqual(['svc.porter*']);
    expect(byKey['svc.porter*']).toBe('skipped lock');
    for (const login of PEOPLE) expect(status(pipeline, login)).toBe('Active');
    expect(writes(pipeline)).toBe(before);
  });

  it('a key computed by an expression is still computed when another expression fails, before or after it', async () => {
    const mapping = loadMapping(
      {
        fields: {
          groups: "$table('depts', Dept)",
          username: '$lowercase(Login)',
          position: "$substringBefore(Title, '/') & $table('depts', Dept)",
        },
        tables: TABLES,
      },
      'users',
    );
    const rows = PEOPLE.map((login) => [login.toUpperCase(), 'QA', 'Clerk/2']);
    const { info, results } = await sync(csv(['Login', 'Dept', 'Title'], rows), mapping);
    expect(info.sync).toMatchObject({ locks: 0, held: false });
    const fileRows = results.filter((result) => result.serverOnly === undefined);
    expect(fileRows.map((result) => result.key)).toEqual(PEOPLE);
    expect(fileRows.every((result) => result.status === 'failed')).toBe(true);
    for (const login of PEOPLE) expect(status(pipeline, login)).toBe('Active');
  });

  it('failed rows that name no key hold the sync: nothing is written, and it says why', async () => {
    const mapping = loadMapping(
      {
        fields: { username: "$lowercase(Login) & $table('suffix', Kind)" },
        tables: { suffix: { values: { none: '' } } },
      },
      'users',
    );
    // ann…hal are in the file; ivy's key cannot be computed, the last row has no key at all
    const rows = [
      ...PEOPLE.slice(0, 8).map((login) => [login, 'none']),
      ['ivy', 'QA'],
      ['', 'none'],
    ];
    const before = writes(pipeline);
    const { info, results } = await sync(csv(['Login', 'Kind'], rows), mapping);
    expect(info.state).toBe('held');
    expect(info.sync).toMatchObject({ locks: 2, unnamed: 2, held: true });
    expect(outcomes(results)).toMatchObject({ 'ivy*': 'planned lock', 'jon*': 'planned lock' });
    expect(describeSync(info)).toContain(
      'held: 2 rows of the file failed without a key that can be read, and any of them may name ' +
        'one of the 2 records the sync would lock or delete; nothing was written',
    );
    expect(status(pipeline, 'ivy')).toBe('Active');
    expect(status(pipeline, 'jon')).toBe('Active');
    expect(writes(pipeline)).toBe(before);
  });

  it('failed rows that name no key do not hold a sync that locks and deletes nothing', async () => {
    const text = csv(
      ['username', 'email'],
      [...PEOPLE.map((name) => [name, `${name}@x`]), ['', 'no@x']],
    );
    const { info } = await pipeline.run(text, {
      resource: 'users',
      mode: 'sync',
      sync: { missing: 'lock', maxDeletes: '100%', protect: ['svc.porter'] },
    });
    expect(info.state).toBe('completed_with_errors');
    expect(info.sync).toMatchObject({ locks: 0, unnamed: 1, held: false });
  });
});
