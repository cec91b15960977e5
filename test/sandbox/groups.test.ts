/** groupManager contract: each test name cites the spec line it checks (admin-api.md, 2.2 and 4.2). */
import { describe, expect, it } from 'vitest';
import { adminFailure, useSandbox } from '../helpers/sandbox.js';

describe('groupManager', () => {
  const current = useSandbox();

  it('4.2 POST "Creates new groups ... each with a generated id"; 2.2 "acls ... Empty for a new group"', async () => {
    const { client } = current();
    const created = await client.postGroups([
      { name: 'Editors' },
      { name: 'Viewers', description: 'Look only' },
    ]);
    expect(created).toEqual([
      {
        id: 1,
        name: 'Editors',
        description: '',
        hidden: false,
        priority: 0,
        editLevel: 0,
        viewLevel: 0,
        loginText: '',
        loadingDockType: 0,
        acls: [],
        users: [],
      },
      expect.objectContaining({ id: 2, name: 'Viewers', description: 'Look only', acls: [] }),
    ]);
  });

  it('2.2 loadingDockType "a create request carrying a large number returned 1" (0..3 kept, anything else 1)', async () => {
    const { client } = current();
    const created = await client.postGroups([
      { name: 'a', loadingDockType: 10000 },
      { name: 'b', loadingDockType: 3 },
      { name: 'c', loadingDockType: -1 },
      { name: 'd', loadingDockType: 0 },
    ]);
    expect(created.map((group) => group.loadingDockType)).toEqual([1, 3, 1, 0]);
  });

  it('2.2 ldapDn "Present in some returned records and absent in others" (present only when set)', async () => {
    const { client } = current();
    const created = await client.postGroups([
      { name: 'ldap', ldapDn: 'cn=editors,ou=groups,dc=example,dc=com' },
      { name: 'local' },
    ]);
    expect(created[0]?.ldapDn).toBe('cn=editors,ou=groups,dc=example,dc=com');
    expect(created[1]).not.toHaveProperty('ldapDn');
    const [local] = await client.listGroups({ name: 'local' });
    expect(local).not.toHaveProperty('ldapDn');
  });

  it('2.2 acls "Supplied by the service": acls sent in a request are ignored', async () => {
    const { client } = current();
    const [created] = await client.postGroups([{ name: 'Editors', acls: ['0_1_FAKE'] }]);
    expect(created?.acls).toEqual([]);
  });

  it('4.2 PUT "A record without id creates a group. A record with id updates that group."', async () => {
    const { client, store } = current();
    const [created] = await client.putGroups([{ name: 'Editors', priority: 1 }]);
    expect(created?.id).toBe(1);
    const [updated] = await client.putGroups([{ id: 1, name: 'Senior Editors', priority: 5 }]);
    expect(updated).toMatchObject({ id: 1, name: 'Senior Editors', priority: 5 });
    expect(store.counts().groups).toBe(1);
    expect(store.groupByName('Editors')).toBeUndefined();
  });

  it('4.2 PUT "Update changes description, priority, editLevel, viewLevel, name and users. The users array in the request replaces the previous one."', async () => {
    const { client } = current();
    await client.postUsers([{ username: 'a' }, { username: 'b' }, { username: 'c' }]);
    const [group] = await client.postGroups([{ name: 'Editors', users: [1, 2] }]);
    const [updated] = await client.putGroups([
      {
        id: group?.id,
        name: 'Editors 2',
        description: 'new',
        priority: 7,
        editLevel: 2,
        viewLevel: 3,
        users: [3, 2],
      },
    ]);
    expect(updated).toMatchObject({
      name: 'Editors 2',
      description: 'new',
      priority: 7,
      editLevel: 2,
      viewLevel: 3,
      users: [3, 2],
    });
  });

  it('PUT update overwrites: fields the record does not carry go back to their defaults', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'a' }]);
    const [group] = await client.postGroups([
      {
        name: 'Editors',
        description: 'x',
        hidden: true,
        loginText: 'hi',
        ldapDn: 'cn=e',
        users: [1],
      },
    ]);
    await client.putGroups([{ id: group?.id, name: 'Editors' }]);
    const stored = store.group(group?.id ?? 0);
    expect(stored).toMatchObject({ description: '', hidden: false, loginText: '', users: [] });
    expect(stored).not.toHaveProperty('ldapDn');
  });

  it('4.2 POST "The operation fails if the group already exists" (409 ALREADY_EXISTS, also within one request)', async () => {
    const { client, store } = current();
    await client.postGroups([{ name: 'Editors' }]);
    const existing = await adminFailure(() =>
      client.postGroups([{ name: 'Viewers' }, { name: 'Editors' }]),
    );
    expect(existing).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 1 });
    const twice = await adminFailure(() => client.postGroups([{ name: 'X' }, { name: 'X' }]));
    expect(twice).toMatchObject({ status: 409, index: 1 });
    expect(store.groups().map((group) => group.name)).toEqual(['Editors']);
  });

  it('PUT without id on a taken name is 409, and so is renaming onto one', async () => {
    const { client } = current();
    await client.putGroups([{ name: 'Editors' }, { name: 'Viewers' }]);
    const create = await adminFailure(() => client.putGroups([{ name: 'Editors' }]));
    expect(create).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS' });
    const rename = await adminFailure(() => client.putGroups([{ id: 2, name: 'Editors' }]));
    expect(rename).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS' });
  });

  it('2.2 id "Not allowed when creating by POST" (400 BAD_REQUEST)', async () => {
    const { client } = current();
    const error = await adminFailure(() => client.postGroups([{ id: 5, name: 'Editors' }]));
    expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST', index: 0 });
  });

  it('PUT with an unknown id is 404 NOT_FOUND; a record without name is 400', async () => {
    const { client } = current();
    const unknown = await adminFailure(() => client.putGroups([{ id: 9, name: 'Ghosts' }]));
    expect(unknown).toMatchObject({ status: 404, errorcode: 'NOT_FOUND' });
    const nameless = await adminFailure(() => client.putGroups([{ description: 'no name' }]));
    expect(nameless).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
  });

  it('2.2 name "Unique key for lookup and delete": a blank one is refused like a missing one (400)', async () => {
    const { client, store } = current();
    await client.postGroups([{ name: 'Editors' }]);
    for (const name of ['', ' ', '\t \n']) {
      for (const call of [
        () => client.postGroups([{ name: 'Fine' }, { name }]),
        () => client.putGroups([{ name: 'Fine' }, { name }]),
        () => client.putGroups([{ id: 1, name }]),
      ]) {
        const error = await adminFailure(call);
        expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
        expect(error.message).toContain('name');
      }
    }
    expect(store.groups().map((group) => group.name)).toEqual(['Editors']);
  });

  it('4.2 GET "With neither id nor name, all groups are returned"; id and name each return one', async () => {
    const { client } = current();
    await client.postGroups([{ name: 'Editors' }, { name: 'Viewers' }]);
    expect((await client.listGroups()).map((group) => group.name)).toEqual(['Editors', 'Viewers']);
    expect((await client.listGroups({ id: 2 })).map((group) => group.name)).toEqual(['Viewers']);
    expect((await client.listGroups({ name: 'Editors' })).map((group) => group.id)).toEqual([1]);
    expect(await client.listGroups({ id: 3 })).toEqual([]);
    expect(await client.listGroups({ name: 'Nobody' })).toEqual([]);
  });

  it('4.2 DELETE "Each object needs only id or name. A full record is also accepted."', async () => {
    const { client, store } = current();
    await client.postGroups([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const [full] = await client.listGroups({ name: 'c' });
    const removed = await client.deleteGroups([{ id: 1 }, { name: 'b' }, full ?? {}]);
    expect(removed.map((group) => group.name)).toEqual(['a', 'b', 'c']);
    expect(store.counts().groups).toBe(0);
  });

  it('4.2 DELETE "The users array in each returned record is empty"', async () => {
    const { client } = current();
    await client.postUsers([{ username: 'a' }]);
    await client.postGroups([{ name: 'Editors', users: [1], description: 'kept' }]);
    const [removed] = await client.deleteGroups([{ name: 'Editors' }]);
    expect(removed).toMatchObject({ id: 1, name: 'Editors', description: 'kept', users: [] });
  });

  it('DELETE of an unknown id or name is 404 NOT_FOUND, and applies nothing', async () => {
    const { client, store } = current();
    await client.postGroups([{ name: 'Editors' }]);
    const byName = await adminFailure(() => client.deleteGroups([{ id: 1 }, { name: 'Nobody' }]));
    expect(byName).toMatchObject({ status: 404, errorcode: 'NOT_FOUND', index: 1 });
    const byId = await adminFailure(() => client.deleteGroups([{ id: 7 }]));
    expect(byId).toMatchObject({ status: 404, errorcode: 'NOT_FOUND', index: 0 });
    expect(store.counts().groups).toBe(1);
  });
});
