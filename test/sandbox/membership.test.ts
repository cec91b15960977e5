/**
 * One membership relation: a group's `users` (2.2) and a user's `groups` (2.3) are the same
 * facts seen from two sides, so a change on either side shows on the other.
 */
import { describe, expect, it } from 'vitest';
import { adminFailure, useSandbox } from '../helpers/sandbox.js';

describe('membership', () => {
  const current = useSandbox();

  async function setUp(): Promise<void> {
    const { client } = current();
    await client.postGroups([{ name: 'Editors' }, { name: 'Viewers' }]);
    await client.postUsers([
      { username: 'ada', groups: [1, 2] },
      { username: 'alan', groups: [2] },
    ]);
  }

  it('2.3 "groups: Group ids of the user" shows in 2.2 "users: User ids that are members of the group"', async () => {
    const { client } = current();
    await setUp();
    const groups = await client.listGroups();
    expect(groups.map((group) => group.users)).toEqual([[1], [1, 2]]);
  });

  it("a user update changes the groups' member lists", async () => {
    const { client, store } = current();
    await setUp();
    await client.putUsers([{ userId: 2, username: 'alan', groups: [1] }]);
    expect(store.group(1)?.users).toEqual([1, 2]);
    expect(store.group(2)?.users).toEqual([1]);
  });

  it('4.2 "The users array in the request replaces the previous one" and shows in each user\'s groups', async () => {
    const { client } = current();
    await setUp();
    await client.putGroups([{ id: 2, name: 'Viewers', users: [2] }]);
    const users = await client.listUsers();
    expect(users.map((user) => user.groups)).toEqual([[1], [2]]);
    await client.putGroups([{ id: 1, name: 'Editors', users: [1, 2] }]);
    expect((await client.listUsers({ username: 'alan' }))[0]?.groups).toEqual([2, 1]);
  });

  it('deleting a user removes it from its groups', async () => {
    const { client, store } = current();
    await setUp();
    await client.deleteUsers([{ username: 'ada' }]);
    expect(store.groups().map((group) => group.users)).toEqual([[], [2]]);
  });

  it('deleting a group removes it from its users and removes its ACLs', async () => {
    const { client, store } = current();
    await setUp();
    const [acl] = await client.putAcls([{ name: 'Read', groupId: 2 }]);
    await client.putAcls([{ name: 'Keep', groupId: 1 }]);
    const [removed] = await client.deleteGroups([{ id: 2 }]);
    expect(removed?.acls).toEqual([acl?.id]);
    expect(store.users().map((user) => user.groups)).toEqual([[1], []]);
    expect(await client.listAcls({ id: acl?.id })).toEqual([]);
    expect(await client.listAcls({ groupId: 2 })).toEqual([]);
    expect((await client.listAcls()).map((entry) => entry.name)).toEqual(['Keep']);
    expect(store.stats.applied.acls.deleted).toBe(1);
  });

  it('4.1 GET aclManager userId "Return all ACLs of this user" follows membership changes', async () => {
    const { client } = current();
    await setUp();
    await client.putAcls([
      { name: 'e', groupId: 1 },
      { name: 'v', groupId: 2 },
    ]);
    expect((await client.listAcls({ userId: 2 })).map((acl) => acl.name)).toEqual(['v']);
    await client.putGroups([{ id: 1, name: 'Editors', users: [1, 2] }]);
    expect((await client.listAcls({ userId: 2 })).map((acl) => acl.name)).toEqual(['v', 'e']);
  });

  it("an unknown group id in a user's groups is 400 UNKNOWN_REFERENCE with the record's index; nothing applied", async () => {
    const { client, store } = current();
    await setUp();
    const error = await adminFailure(() =>
      client.postUsers([
        { username: 'grace', groups: [1] },
        { username: 'kofi', groups: [1, 77] },
      ]),
    );
    expect(error).toMatchObject({ status: 400, errorcode: 'UNKNOWN_REFERENCE', index: 1 });
    expect(store.userByName('grace')).toBeUndefined();
    expect(store.group(1)?.users).toEqual([1]);
  });

  it("an unknown user id in a group's users is 400 UNKNOWN_REFERENCE with the record's index", async () => {
    const { client, store } = current();
    await setUp();
    const error = await adminFailure(() =>
      client.putGroups([{ id: 1, name: 'Editors', users: [1, 2, 99] }]),
    );
    expect(error).toMatchObject({ status: 400, errorcode: 'UNKNOWN_REFERENCE', index: 0 });
    expect(store.group(1)?.users).toEqual([1]);
  });

  it('repeated ids in groups or users count once', async () => {
    const { client, store } = current();
    await setUp();
    await client.putUsers([{ userId: 2, username: 'alan', groups: [1, 1, 2] }]);
    expect(store.user(2)?.groups).toEqual([1, 2]);
    await client.putGroups([{ id: 1, name: 'Editors', users: [2, 2] }]);
    expect(store.group(1)?.users).toEqual([2]);
  });
});
