import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from '../../src/admin/client.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let client: AdminClient;
beforeAll(async () => {
  pipeline = await startPipeline();
  client = pipeline.context.createAdminClient();
});
afterAll(async () => {
  await client?.close();
  await pipeline?.close();
});

/** A group whose name is the id of another group: "2" names one group, #2 is another. */
async function digitNamedGroups(prefix: string) {
  const [other] = await client.postGroups([{ name: `${prefix} other` }]);
  const [named] = await client.postGroups([{ name: String(other!.id) }]);
  return { other: other!, named: named! };
}

describe('a reference that is the name of one record and the id of another', () => {
  it('users: groups=N is refused as ambiguous naming both; #ID and name:N settle it', async () => {
    const { other, named } = await digitNamedGroups('users');
    const [hashNamed] = await client.postGroups([{ name: `#${other.id}` }]);
    const [onlyNamed] = await client.postGroups([{ name: '777777' }]);
    const { results } = await pipeline.run(
      csv(
        ['username', 'groups'],
        [
          ['ref.bare', String(other.id)],
          ['ref.id', `#${other.id}`],
          ['ref.named', `#${named.id}`],
          ['ref.name', `name:${other.id}`],
          ['ref.hash', `name:#${other.id}`],
          ['ref.only.name', '777777'],
        ],
      ),
      { resource: 'users', mode: 'create' },
    );
    expect(results[0]).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_GROUP_AMBIGUOUS',
      field: 'groups',
      attempts: 0,
    });
    expect(results[0]!.error).toContain(`group "${other.id}" has id ${named.id}`);
    expect(results[0]!.error).toContain(`group id ${other.id} is "users other"`);
    expect(results.slice(1).map((result) => result.status)).toEqual(Array(5).fill('succeeded'));
    const groupsOf = async (username: string) => (await client.listUsers({ username }))[0]?.groups;
    expect(await client.listUsers({ username: 'ref.bare' })).toEqual([]);
    expect(await groupsOf('ref.id')).toEqual([other.id]);
    expect(await groupsOf('ref.named')).toEqual([named.id]);
    expect(await groupsOf('ref.name')).toEqual([named.id]);
    expect(await groupsOf('ref.hash')).toEqual([hashNamed!.id]);
    expect(await groupsOf('ref.only.name')).toEqual([onlyNamed!.id]);
  });

  it('groups: a users cell of digits that is one username and another userId is refused', async () => {
    const [other] = await client.postUsers([{ username: 'digits.other' }]);
    const [named] = await client.postUsers([{ username: String(other!.userId) }]);
    const { results } = await pipeline.run(
      csv(
        ['name', 'users'],
        [
          ['Digits Bare', String(other!.userId)],
          ['Digits Id', `#${other!.userId}`],
          ['Digits Name', `name:${other!.userId}`],
        ],
      ),
      { resource: 'groups', mode: 'create' },
    );
    expect(results[0]).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_GROUP_AMBIGUOUS',
      field: 'users',
    });
    expect(results[0]!.error).toContain(`user "${other!.userId}" has id ${named!.userId}`);
    expect(results.slice(1).map((result) => result.status)).toEqual(['succeeded', 'succeeded']);
    expect((await client.listGroups({ name: 'Digits Id' }))[0]?.users).toEqual([other!.userId]);
    expect((await client.listGroups({ name: 'Digits Name' }))[0]?.users).toEqual([named!.userId]);
  });

  it('ACLs: a groupId that is one group name and another group id is refused', async () => {
    const { other, named } = await digitNamedGroups('acls');
    const { results } = await pipeline.run(
      csv(
        ['name', 'groupId'],
        [
          ['Bare', String(other.id)],
          ['By id', `#${other.id}`],
          ['By name', `name:${other.id}`],
        ],
      ),
      { resource: 'acls', mode: 'create' },
    );
    expect(results[0]).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_GROUP_AMBIGUOUS',
      field: 'groupId',
    });
    expect(results.slice(1).map((result) => result.status)).toEqual(['succeeded', 'succeeded']);
    expect((await client.listAcls({ groupId: other.id })).map((acl) => acl.name)).toEqual([
      'By id',
    ]);
    expect((await client.listAcls({ groupId: named.id })).map((acl) => acl.name)).toEqual([
      'By name',
    ]);
  });
});
