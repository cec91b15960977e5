/** userManager contract: each test name cites the spec line it checks (admin-api.md, 2.3 and 4.3). */
import { describe, expect, it } from 'vitest';
import { adminFailure, useSandbox } from '../helpers/sandbox.js';

const PROFILE = [
  'firstName',
  'middleName',
  'lastName',
  'company',
  'dept',
  'position',
  'address1',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'phone',
  'ext',
  'email',
];

describe('userManager', () => {
  const current = useSandbox();

  it('4.3 "A create record can consist of username alone. Defaults are then applied (2.3)"', async () => {
    const { client } = current();
    const [created] = await client.putUsers([{ username: 'solo' }]);
    expect(created).toEqual({
      userId: 1,
      username: 'solo',
      type: 'General User',
      status: 'Active',
      groups: [],
      substitutionMap: {},
    });
  });

  it('2.3 "The returned record of a create or update omits string fields that the request did not carry"', async () => {
    const { client } = current();
    const [created] = await client.postUsers([
      { username: 'ada', firstName: 'Ada', email: 'ada@example.com' },
    ]);
    expect(created).toMatchObject({ firstName: 'Ada', email: 'ada@example.com' });
    for (const field of PROFILE.filter((name) => name !== 'firstName' && name !== 'email')) {
      expect(created).not.toHaveProperty(field);
    }
    const [updated] = await client.putUsers([
      { userId: created?.userId, username: 'ada', dept: 'R&D' },
    ]);
    expect(updated).toMatchObject({ dept: 'R&D' });
    expect(updated).not.toHaveProperty('firstName');
  });

  it('GET shows the full stored record; never-set strings are "" (sandbox choice)', async () => {
    const { client } = current();
    await client.postUsers([{ username: 'ada', firstName: 'Ada' }]);
    const [read] = await client.listUsers({ username: 'ada' });
    for (const field of PROFILE) expect(read).toHaveProperty(field);
    expect(read).toMatchObject({ firstName: 'Ada', lastName: '', email: '', type: 'General User' });
  });

  it('2.3 "position sent in a request comes back as an empty string"', async () => {
    const { client } = current();
    const [created] = await client.postUsers([{ username: 'ada', position: 'vertical' }]);
    expect(created?.position).toBe('');
    const [read] = await client.listUsers({ userId: created?.userId });
    expect(read?.position).toBe('');
  });

  it('2.3 "primaryGroup: Accepted in requests. Never present in the returned records."', async () => {
    const { client } = current();
    const [group] = await client.postGroups([{ name: 'Editors' }]);
    const [created] = await client.postUsers([{ username: 'ada', primaryGroup: group?.id }]);
    expect(created).not.toHaveProperty('primaryGroup');
    const [read] = await client.listUsers({ userId: created?.userId });
    expect(read).not.toHaveProperty('primaryGroup');
  });

  it('2.3 "username ... Values containing a space are accepted"', async () => {
    const { client } = current();
    const [created] = await client.postUsers([{ username: 'Ada King Lovelace' }]);
    expect(created?.username).toBe('Ada King Lovelace');
    expect(await client.listUsers({ username: 'Ada King Lovelace' })).toHaveLength(1);
  });

  it('4.3 PUT "A record without userId creates a user ... A created user carries its generated userId" (ids increase)', async () => {
    const { client } = current();
    const created = await client.putUsers([
      { username: 'a' },
      { username: 'b' },
      { username: 'c' },
    ]);
    expect(created.map((user) => user.userId)).toEqual([1, 2, 3]);
    await client.deleteUsers([{ username: 'c' }]);
    const [next] = await client.putUsers([{ username: 'd' }]);
    expect(next?.userId).toBe(4);
  });

  it('4.3 PUT "A record with userId updates the existing user by overwriting it with the record supplied"', async () => {
    const { client, store } = current();
    const [group] = await client.postGroups([{ name: 'Editors' }]);
    const [created] = await client.postUsers([
      {
        username: 'ada',
        firstName: 'Ada',
        dept: 'Research',
        type: 'Group Administrator',
        status: 'Locked',
        groups: [group?.id ?? 0],
        substitutionMap: { manager: 'alan' },
      },
    ]);
    await client.putUsers([{ userId: created?.userId, username: 'ada.l', lastName: 'Lovelace' }]);
    // Whatever the update did not carry is back to its default: porter must read, merge, then write.
    expect(store.user(created?.userId ?? 0)).toMatchObject({
      username: 'ada.l',
      firstName: '',
      lastName: 'Lovelace',
      dept: '',
      type: 'General User',
      status: 'Active',
      groups: [],
      substitutionMap: {},
    });
    expect(store.userByName('ada')).toBeUndefined();
  });

  it('4.3 POST "fails if a user with the same username already exists" (409 ALREADY_EXISTS with index)', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'ada' }]);
    const error = await adminFailure(() =>
      client.postUsers([{ username: 'alan' }, { username: 'ada' }]),
    );
    expect(error).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 1 });
    expect(store.userByName('alan')).toBeUndefined();
  });

  it('4.3 POST fails on the same username twice in one request, and applies nothing', async () => {
    const { client, store } = current();
    const error = await adminFailure(() =>
      client.postUsers([{ username: 'x' }, { username: 'y' }, { username: 'x' }]),
    );
    expect(error).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 2 });
    expect(store.counts().users).toBe(0);
  });

  it('2.3 "userId ... Not allowed when creating by POST" (400 BAD_REQUEST)', async () => {
    const { client } = current();
    const [created] = await client.postUsers([{ username: 'ada' }]);
    const error = await adminFailure(() =>
      client.postUsers([{ userId: created?.userId, username: 'x' }]),
    );
    expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST', index: 0 });
  });

  it('an email that is not an email address is 400, by the rule the importer checks too', async () => {
    const { client, store } = current();
    const error = await adminFailure(() =>
      client.postUsers([
        { username: 'ok', email: 'ok@example.com' },
        { username: 'bad', email: 'not-an-email' },
      ]),
    );
    expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST', index: 1 });
    expect(error.message).toContain('not an email address');
    expect(store.counts().users).toBe(0);
    // an empty one is no email, not a bad one
    await client.postUsers([{ username: 'none', email: '' }]);
  });

  it('PUT without userId on a taken username is 409 too, so no two users ever share a username', async () => {
    const { client, store } = current();
    await client.putUsers([{ username: 'ada' }]);
    const error = await adminFailure(() => client.putUsers([{ username: 'ada' }]));
    expect(error).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS', index: 0 });
    const [other] = await client.putUsers([{ username: 'alan' }]);
    const rename = await adminFailure(() =>
      client.putUsers([{ userId: other?.userId, username: 'ada' }]),
    );
    expect(rename).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS' });
    expect(store.users().map((user) => user.username)).toEqual(['ada', 'alan']);
  });

  it('4.3 PUT "A record with userId updates the existing user by overwriting it": a new username renames it in place, groups and memberships kept', async () => {
    const { client } = current();
    const [team] = await client.postGroups([{ name: 'Sales' }]);
    const [kim] = await client.postUsers([
      { username: 'kim', groups: [team!.id!], substitutionMap: { porterAnchor: 'K1' } },
    ]);
    const [renamed] = await client.putUsers([
      {
        userId: kim!.userId,
        username: 'kim.lee',
        groups: [team!.id!],
        substitutionMap: { porterAnchor: 'K1' },
      },
    ]);
    expect(renamed).toMatchObject({ userId: kim!.userId, username: 'kim.lee', groups: [team!.id] });
    expect(await client.listUsers({ username: 'kim' })).toEqual([]);
    expect(await client.listUsers({ username: 'kim.lee' })).toMatchObject([
      { userId: kim!.userId, substitutionMap: { porterAnchor: 'K1' } },
    ]);
    expect((await client.listGroups({ name: 'Sales' }))[0]?.users).toEqual([kim!.userId]);
  });

  it('a rename frees the old username for a later record of the same request', async () => {
    const { client, store } = current();
    const [ada] = await client.postUsers([{ username: 'ada' }]);
    await client.putUsers([{ userId: ada?.userId, username: 'ada.old' }, { username: 'ada' }]);
    expect(store.users().map((user) => user.username)).toEqual(['ada.old', 'ada']);
  });

  it('2.3 username "Unique key for create-conflict checks and for delete": a blank one is refused like a missing one (400)', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'ada' }]);
    for (const username of ['', ' ', '\t \n']) {
      for (const call of [
        () => client.postUsers([{ username: 'fine' }, { username }]),
        () => client.putUsers([{ username: 'fine' }, { username }]),
        () => client.putUsers([{ userId: 1, username }]),
      ]) {
        const error = await adminFailure(call);
        expect(error).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
        expect(error.message).toContain('username');
      }
    }
    const missing = await adminFailure(() => client.postUsers([{ firstName: 'no name' }]));
    expect(missing).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST', index: 0 });
    expect(store.users().map((user) => user.username)).toEqual(['ada']);
  });

  it('PUT with an unknown userId is 404 NOT_FOUND', async () => {
    const { client } = current();
    const error = await adminFailure(() => client.putUsers([{ userId: 99, username: 'ghost' }]));
    expect(error).toMatchObject({ status: 404, errorcode: 'NOT_FOUND', index: 0 });
  });

  it('type and status outside the product\'s values ("General User", "Group Administrator", "Global Administrator"; "Active", "Locked") are 400', async () => {
    const { client } = current();
    const [admin] = await client.postUsers([
      { username: 'root', type: 'Global Administrator', status: 'Locked' },
    ]);
    expect(admin).toMatchObject({ type: 'Global Administrator', status: 'Locked' });
    const badType = await adminFailure(() =>
      client.postUsers([{ username: 'x', type: 'Superuser' }]),
    );
    expect(badType).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
    const badStatus = await adminFailure(() =>
      client.postUsers([{ username: 'x', status: 'Gone' }]),
    );
    expect(badStatus).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
  });

  it('GET (product notes) "userId, username ... With neither ... it returns all users. It always answers with a JSON array"', async () => {
    const { client } = current();
    await client.postUsers([{ username: 'a' }, { username: 'b' }]);
    expect((await client.listUsers()).map((user) => user.username)).toEqual(['a', 'b']);
    expect((await client.listUsers({ userId: 2 })).map((user) => user.username)).toEqual(['b']);
    expect((await client.listUsers({ username: 'a' })).map((user) => user.userId)).toEqual([1]);
    expect(await client.listUsers({ username: 'nobody' })).toEqual([]);
    expect(await client.listUsers({ userId: 1, username: 'b' })).toEqual([]);
  });

  it('4.3 DELETE "Each object needs only userId or username"; "userId may be sent as a number or as a numeric string"', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'a' }, { username: 'b' }, { username: 'c' }]);
    const removed = await client.deleteUsers([
      { userId: 1 },
      { userId: '2' as unknown as number },
      { username: 'c' },
    ]);
    expect(removed.map((user) => user.username)).toEqual(['a', 'b', 'c']);
    expect(store.counts().users).toBe(0);
  });

  it('4.3 DELETE "A record looked up by id only has the id, the username, type null, status "" and groups []"', async () => {
    const { client } = current();
    const [group] = await client.postGroups([{ name: 'Editors' }]);
    await client.postUsers([
      { username: 'ada', firstName: 'Ada', groups: [group?.id ?? 0] },
      { username: 'alan' },
    ]);
    const removed = await client.deleteUsers([{ userId: 1 }, { username: 'alan' }]);
    expect(removed).toEqual([
      { userId: 1, username: 'ada', type: null, status: '', groups: [] },
      { userId: 2, username: 'alan', type: null, status: '', groups: [] },
    ]);
  });

  it('4.3 DELETE "A full record is also accepted"', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'ada', firstName: 'Ada' }]);
    const [full] = await client.listUsers({ username: 'ada' });
    await client.deleteUsers([full ?? {}]);
    expect(store.counts().users).toBe(0);
  });

  it('DELETE of an unknown userId or username is 404 NOT_FOUND, and applies nothing', async () => {
    const { client, store } = current();
    await client.postUsers([{ username: 'ada' }]);
    const byName = await adminFailure(() =>
      client.deleteUsers([{ username: 'ada' }, { username: 'nobody' }]),
    );
    expect(byName).toMatchObject({ status: 404, errorcode: 'NOT_FOUND', index: 1 });
    const byId = await adminFailure(() => client.deleteUsers([{ userId: 42 }]));
    expect(byId).toMatchObject({ status: 404, errorcode: 'NOT_FOUND', index: 0 });
    const twice = await adminFailure(() =>
      client.deleteUsers([{ userId: 1 }, { username: 'ada' }]),
    );
    expect(twice).toMatchObject({ status: 404, index: 1 });
    expect(store.counts().users).toBe(1);
  });
});
