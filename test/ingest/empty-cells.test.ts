import { describe, expect, it } from 'vitest';
import { ingestRecords } from './ingest-fixture.js';

const GROUPS = 'name,description,priority,hidden,users\nSales,,,,\n';

describe('empty values', () => {
  it('leave the field as is by default: it is left out of the record', async () => {
    const records = await ingestRecords(GROUPS, { resource: 'groups' });
    expect(records[0].record).toEqual({ name: 'Sales' });
    expect(records[0].warnings).toEqual([]);
  });

  it('with emptyAsClear, clear strings, lists and objects, and warn for integers and booleans', async () => {
    const records = await ingestRecords(GROUPS, { resource: 'groups', emptyAsClear: true });
    expect(records[0].record).toEqual({ name: 'Sales', description: '', users: [] });
    expect(records[0].warnings).toEqual([
      'field "priority" is empty and cannot be cleared (integer); left as is',
      'field "hidden" is empty and cannot be cleared (boolean); left as is',
    ]);
    const users = await ingestRecords('username,substitutionMap,groups\nalice,,\n', {
      emptyAsClear: true,
    });
    expect(users[0].record).toEqual({ username: 'alice', substitutionMap: {}, groups: [] });
  });

  it('never clear an id: an empty id means a record without one', async () => {
    const records = await ingestRecords('userId,username\n,alice\n', { emptyAsClear: true });
    expect(records[0].record).toEqual({ username: 'alice' });
    expect(records[0].warnings).toEqual([]);
    const acls = await ingestRecords('id,name,groupId\n,Read only,3\n', {
      resource: 'acls',
      emptyAsClear: true,
    });
    expect(acls[0].record).toEqual({ name: 'Read only', groupId: 3 });
  });

  it('treat blank text in a number, boolean or list cell as empty', async () => {
    const records = await ingestRecords('name,priority,users\nSales,  ,  \n', {
      resource: 'groups',
    });
    expect(records[0].record).toEqual({ name: 'Sales' });
  });

  it('treat JSON null as an empty cell', async () => {
    const plain = await ingestRecords('[{"name":"Sales","description":null,"priority":null}]', {
      resource: 'groups',
    });
    expect(plain[0].record).toEqual({ name: 'Sales' });
    const cleared = await ingestRecords('[{"name":"Sales","description":null,"users":null}]', {
      resource: 'groups',
      emptyAsClear: true,
    });
    expect(cleared[0].record).toEqual({ name: 'Sales', description: '', users: [] });
  });

  it('treat JSON null for a user type as empty: type is nullable only in delete answers', async () => {
    const records = await ingestRecords('[{"username":"alice","type":null}]');
    expect(records[0].record).toEqual({ username: 'alice' });
  });

  it('keep JSON null as a value for searchFilter, which is nullable', async () => {
    const records = await ingestRecords('{"id":"1_3_abc","searchFilter":null}\n', {
      resource: 'acls',
    });
    expect(records[0].record).toEqual({ id: '1_3_abc', searchFilter: null });
  });

  it('keep an empty JSON string as a value for string fields', async () => {
    const records = await ingestRecords('[{"username":"alice","middleName":""}]');
    expect(records[0].record).toEqual({ username: 'alice', middleName: '' });
  });
});
