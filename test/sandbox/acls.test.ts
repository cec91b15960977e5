/** aclManager contract: each test name cites the spec line it checks (admin-api.md, 2.1 and 4.1). */
import { describe, expect, it } from 'vitest';
import { defaultWorkspaceId } from '../../src/sandbox/ids.js';
import { adminFailure, useSandbox } from '../helpers/sandbox.js';

const UUID = '[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}';

describe('aclManager', () => {
  const current = useSandbox();

  async function twoGroups(): Promise<void> {
    await current().client.postGroups([{ name: 'Editors' }, { name: 'Viewers' }]);
  }

  it('2.1 id "three parts joined by underscores (a number, the group id, a UUID)", like 0_6_8A07B49F-...', async () => {
    const { client } = current();
    await twoGroups();
    const created = await client.putAcls([
      { name: 'Read', groupId: 2 },
      { name: 'Write', groupId: 2 },
    ]);
    expect(created[0]?.id).toMatch(new RegExp(`^0_2_${UUID}$`));
    expect(created[1]?.id).toMatch(new RegExp(`^1_2_${UUID}$`));
  });

  it('2.1 "an ACL created with an empty workspaces array comes back with one workspace id filled in" (the group\'s default workspace)', async () => {
    const { client } = current();
    await twoGroups();
    const created = await client.putAcls([
      { name: 'a', groupId: 1, workspaces: [] },
      { name: 'b', groupId: 1 },
      { name: 'c', groupId: 2, workspaces: [] },
      { name: 'd', groupId: 2, workspaces: ['11111111-2222-4333-8444-555555555555'] },
    ]);
    expect(created[0]?.workspaces).toEqual([defaultWorkspaceId(1)]);
    expect(created[0]?.workspaces?.[0]).toMatch(new RegExp(`^${UUID}$`));
    expect(created[1]?.workspaces).toEqual(created[0]?.workspaces);
    expect(created[2]?.workspaces).toEqual([defaultWorkspaceId(2)]);
    expect(created[2]?.workspaces).not.toEqual(created[0]?.workspaces);
    expect(created[3]?.workspaces).toEqual(['11111111-2222-4333-8444-555555555555']);
  });

  it('4.1 PUT "A record without id creates an ACL ... A created ACL carries its generated id" with every field', async () => {
    const { client } = current();
    await twoGroups();
    const [created] = await client.putAcls([
      {
        name: 'Brand',
        groupId: 1,
        description: 'brand portal',
        hidden: true,
        revokedPermissions: ['fileUpload', 'dragDrop'],
        rootPath: '/Assets/Brand',
        workspaces: ['11111111-2222-4333-8444-555555555555'],
        searchFilter: 'status:approved',
        forms: ['Basic', 'Photo'],
        uploadForm: 'Photo',
      },
    ]);
    expect(created).toEqual({
      id: expect.stringMatching(/^0_1_/),
      name: 'Brand',
      description: 'brand portal',
      hidden: true,
      groupId: 1,
      revokedPermissions: ['fileUpload', 'dragDrop'],
      rootPath: '/Assets/Brand',
      workspaces: ['11111111-2222-4333-8444-555555555555'],
      searchFilter: 'status:approved',
      forms: ['Basic', 'Photo'],
      uploadForm: 'Photo',
    });
    const [defaults] = await client.putAcls([{ name: 'Plain', groupId: 1 }]);
    expect(defaults).toMatchObject({
      description: '',
      hidden: false,
      revokedPermissions: [],
      rootPath: '',
      searchFilter: null,
      forms: [],
      uploadForm: '',
    });
  });

  it('4.1 PUT "A record with id updates that ACL ... The example changes name, description and uploadForm."', async () => {
    const { client, store } = current();
    await twoGroups();
    const [created] = await client.putAcls([
      { name: 'Read', groupId: 1, description: 'old', forms: ['Basic'] },
    ]);
    const [updated] = await client.putAcls([
      { ...created, name: 'Read only', description: 'new', uploadForm: 'Basic' },
    ]);
    expect(updated).toMatchObject({
      id: created?.id,
      name: 'Read only',
      description: 'new',
      uploadForm: 'Basic',
      groupId: 1,
      forms: ['Basic'],
    });
    expect(store.counts().acls).toBe(1);
  });

  it('2.2 acls "Ids of the ACLs of the group": the group lists its ACL ids in creation order', async () => {
    const { client } = current();
    await twoGroups();
    const created = await client.putAcls([
      { name: 'a', groupId: 1 },
      { name: 'b', groupId: 2 },
      { name: 'c', groupId: 1 },
    ]);
    const [editors] = await client.listGroups({ id: 1 });
    expect(editors?.acls).toEqual([created[0]?.id, created[2]?.id]);
  });

  it('4.1 GET by id, groupId, userId (the ACLs of the user\'s groups), and "With none of id, userId or groupId, all ACLs are returned"', async () => {
    const { client } = current();
    await twoGroups();
    await client.postGroups([{ name: 'Others' }]);
    const created = await client.putAcls([
      { name: 'a', groupId: 1 },
      { name: 'b', groupId: 2 },
      { name: 'c', groupId: 3 },
    ]);
    await client.postUsers([{ username: 'ada', groups: [2, 1] }]);
    const names = (records: { name?: string }[]): (string | undefined)[] =>
      records.map((acl) => acl.name);
    expect(names(await client.listAcls())).toEqual(['a', 'b', 'c']);
    expect(names(await client.listAcls({ id: created[1]?.id }))).toEqual(['b']);
    expect(names(await client.listAcls({ groupId: 3 }))).toEqual(['c']);
    expect(names(await client.listAcls({ userId: 1 }))).toEqual(['b', 'a']);
    expect(await client.listAcls({ id: 'nope' })).toEqual([]);
    expect(await client.listAcls({ userId: 99 })).toEqual([]);
    expect(names(await client.listAcls({ userId: 1, groupId: 1 }))).toEqual(['a']);
  });

  it('creating an ACL needs an existing groupId (missing: 400 BAD_REQUEST, unknown: 400 UNKNOWN_REFERENCE)', async () => {
    const { client, store } = current();
    await twoGroups();
    const missing = await adminFailure(() => client.putAcls([{ name: 'x' }]));
    expect(missing).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST', index: 0 });
    const unknown = await adminFailure(() =>
      client.putAcls([
        { name: 'ok', groupId: 1 },
        { name: 'x', groupId: 42 },
      ]),
    );
    expect(unknown).toMatchObject({ status: 400, errorcode: 'UNKNOWN_REFERENCE', index: 1 });
    expect(store.counts().acls).toBe(0);
  });

  it('an ACL name is unique within its group (409), free in another group', async () => {
    const { client } = current();
    await twoGroups();
    await client.putAcls([{ name: 'Read', groupId: 1 }]);
    await client.putAcls([{ name: 'Read', groupId: 2 }]);
    const error = await adminFailure(() => client.putAcls([{ name: 'Read', groupId: 1 }]));
    expect(error).toMatchObject({ status: 409, errorcode: 'ALREADY_EXISTS' });
  });

  it('updating an unknown ACL id is 404; moving an ACL to another group is 400 (its id names the group)', async () => {
    const { client } = current();
    await twoGroups();
    const [created] = await client.putAcls([{ name: 'Read', groupId: 1 }]);
    const unknown = await adminFailure(() => client.putAcls([{ id: '0_1_NOPE', name: 'x' }]));
    expect(unknown).toMatchObject({ status: 404, errorcode: 'NOT_FOUND' });
    const moved = await adminFailure(() => client.putAcls([{ ...created, groupId: 2 }]));
    expect(moved).toMatchObject({ status: 400, errorcode: 'BAD_REQUEST' });
  });

  it('1 "ACLs (resource aclManager): read, create and update" only: POST and DELETE are 405', async () => {
    const { url } = current();
    for (const method of ['POST', 'DELETE'] as const) {
      const response = await fetch(`${url}/wf/restapi/v2/admin/aclManager`, { method });
      expect(response.status).toBe(405);
      expect(await response.json()).toMatchObject({ errorcode: 'METHOD_NOT_ALLOWED' });
      expect(response.headers.get('allow')).toBe('GET, HEAD, PUT');
    }
  });
});
