import { describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { ingest, loadMapping } from '../../src/ingest/index.js';
import { ingestItems, ingestRecords, runIngest } from './ingest-fixture.js';

function mappingError(json: unknown, resource?: 'users' | 'groups' | 'acls'): PorterError {
  try {
    loadMapping(json, resource);
  } catch (error) {
    if (error instanceof PorterError) return error;
    throw error;
  }
  throw new Error('expected the mapping to be refused');
}

describe('mapping files', () => {
  it('load with every part optional', () => {
    expect(loadMapping({})).toEqual({ columns: {}, ignore: [], defaults: {} });
    expect(
      loadMapping({ description: 'HR feed', columns: { Login: 'username' }, ignore: ['Notes'] }),
    ).toEqual({
      columns: { Login: 'username' },
      ignore: ['Notes'],
      defaults: {},
    });
  });

  it.each([
    ['a non-object', [], /expected object/],
    ['an unknown key', { colums: {} }, /Unrecognized key.*colums/],
    ['a non-string target', { columns: { Login: 3 } }, /columns\.Login/],
    ['ignore that is not a list', { ignore: 'Notes' }, /ignore/],
    ['an empty column name', { ignore: [' '] }, /column name is empty/],
    [
      'a column both renamed and ignored',
      { columns: { Notes: 'city' }, ignore: ['notes'] },
      /listed twice/,
    ],
    [
      'two columns to one field',
      { columns: { Login: 'username', User: 'username' } },
      /both map to field "username"/,
    ],
  ])('refuse %s with PORTER_MAPPING_INVALID', (_name, json, message) => {
    const error = mappingError(json);
    expect(error.code).toBe('PORTER_MAPPING_INVALID');
    expect(error.message).toMatch(message);
  });

  it('refuse targets and defaults that are not fields of the resource', () => {
    expect(mappingError({ columns: { Dept: 'Dept' } }, 'users').message).toMatch(
      /did you mean "dept"/,
    );
    expect(mappingError({ columns: { Team: 'team' } }, 'users').message).toMatch(
      /fields of users: userId, username/,
    );
    expect(mappingError({ defaults: { colour: 'red' } }, 'users').message).toMatch(
      /"colour" is not a field/,
    );
    expect(mappingError({ defaults: { userId: 1 } }, 'users').message).toMatch(/same userId/);
    expect(mappingError({ defaults: { acls: [] } }, 'groups').message).toMatch(
      /supplied by the service/,
    );
  });

  it('are checked against the resource when the import starts', () => {
    const mapping = loadMapping({ columns: { Team: 'team' } });
    expect(() => ingest('x', { resource: 'users', mode: 'create', mapping })).toThrow(
      /not a field of users/,
    );
    const badDefault = loadMapping({ defaults: { priority: 'high' } });
    expect(() => ingest('x', { resource: 'groups', mode: 'create', mapping: badDefault })).toThrow(
      /default for "priority": "high" is not an integer/,
    );
  });

  it('rename columns, matching their names case-insensitively', async () => {
    const mapping = loadMapping(
      { columns: { Login: 'username', 'E-mail': 'email', Team: 'groups' } },
      'users',
    );
    const outcome = await runIngest('LOGIN,e-mail,Team\nalice,a@example.com,Sales|Support\n', {
      mapping,
    });
    expect(outcome.header?.fields).toEqual({
      LOGIN: 'username',
      'e-mail': 'email',
      Team: 'groups',
    });
    expect(outcome.items[0]).toMatchObject({
      kind: 'record',
      input: { LOGIN: 'alice', 'e-mail': 'a@example.com', Team: 'Sales|Support' },
      record: { username: 'alice', email: 'a@example.com', groups: ['Sales', 'Support'] },
    });
  });

  it('skip ignored columns, which then are not unknown', async () => {
    const mapping = loadMapping({ ignore: ['Notes', 'Start date'] });
    const outcome = await runIngest('username,notes,Start Date\nalice,likes tea,2024-05-01\n', {
      mapping,
    });
    expect(outcome.header?.fields).toEqual({ username: 'username' });
    expect(outcome.items[0]).toMatchObject({
      kind: 'record',
      input: { username: 'alice', notes: 'likes tea', 'Start Date': '2024-05-01' },
      record: { username: 'alice' },
    });
  });

  it('ignore JSON keys too', async () => {
    const mapping = loadMapping({ ignore: ['_comment'] });
    const records = await ingestRecords('[{"username":"alice","_comment":"new"}]', { mapping });
    expect(records[0].record).toEqual({ username: 'alice' });
  });

  it('apply defaults to records that lack the field, coerced like values', async () => {
    const mapping = loadMapping(
      {
        defaults: {
          type: 'General User',
          status: 'Active',
          groups: 'Staff|7',
          substitutionMap: { lang: 'en' },
        },
      },
      'users',
    );
    const items = await ingestItems('username,status,groups\nalice,,\nbob,Inactive,Sales\n', {
      mapping,
    });
    expect(
      items.map((item) =>
        item.kind === 'record' ? item.record : item.kind === 'invalid' ? item.error : item.reason,
      ),
    ).toEqual([
      {
        username: 'alice',
        type: 'General User',
        status: 'Active',
        groups: ['Staff', 7],
        substitutionMap: { lang: 'en' },
      },
      {
        username: 'bob',
        type: 'General User',
        status: 'Inactive',
        groups: ['Sales'],
        substitutionMap: { lang: 'en' },
      },
    ]);
  });

  it('give every record its own copy of a default list', async () => {
    const mapping = loadMapping({ defaults: { groups: [1] } });
    const records = await ingestRecords('username\nalice\nbob\n', { mapping });
    expect(records[0].record.groups).not.toBe(records[1].record.groups);
  });

  it('let a default fill a required field (groupId for ACLs)', async () => {
    const mapping = loadMapping({ defaults: { groupId: 12 } }, 'acls');
    const records = await ingestRecords('name\nRead only\n', { resource: 'acls', mapping });
    expect(records[0].record).toEqual({ name: 'Read only', groupId: 12 });
  });
});
