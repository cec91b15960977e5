import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PorterError } from '../../src/errors/porter-error.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline();
});
afterAll(async () => {
  await pipeline?.close();
});

describe('groups × every mode', () => {
  it('create, upsert, update and delete groups; users lists replace only when the column is carried', async () => {
    const client = pipeline.context.createAdminClient();
    const [alice, bob] = await client.postUsers([{ username: 'alice' }, { username: 'bob' }]);

    const created = await pipeline.run(
      csv(
        ['name', 'description', 'priority', 'users'],
        [
          ['Editors', 'can edit', 5, 'alice|bob'],
          ['Viewers', 'read only', 1, ''],
        ],
      ),
      { resource: 'groups', mode: 'create' },
    );
    expect(created.info.state).toBe('completed');
    expect(created.results.map((r) => [r.key, r.action, r.status])).toEqual([
      ['Editors', 'create', 'succeeded'],
      ['Viewers', 'create', 'succeeded'],
    ]);
    const [editors] = await client.listGroups({ name: 'Editors' });
    expect(editors?.users?.sort()).toEqual([alice!.userId, bob!.userId].sort());

    // no users column: the members stay
    const updated = await pipeline.run(
      csv(['name', 'description'], [['Editors', 'edit everything']]),
      {
        resource: 'groups',
        mode: 'update',
      },
    );
    expect(updated.results[0]).toMatchObject({ status: 'succeeded', changed: ['description'] });
    const [afterUpdate] = await client.listGroups({ name: 'Editors' });
    expect(afterUpdate).toMatchObject({ description: 'edit everything', priority: 5 });
    expect(afterUpdate?.users?.length).toBe(2);

    // users column carried: it replaces the list
    const upserted = await pipeline.run(
      csv(
        ['name', 'users'],
        [
          ['Editors', 'bob'],
          ['Admins', ''],
        ],
      ),
      { resource: 'groups', mode: 'upsert' },
    );
    expect(upserted.results.map((r) => [r.key, r.action, r.status])).toEqual([
      ['Editors', 'update', 'succeeded'],
      ['Admins', 'create', 'succeeded'],
    ]);
    const [afterUpsert] = await client.listGroups({ name: 'Editors' });
    expect(afterUpsert?.users).toEqual([bob!.userId]);

    const deleted = await pipeline.run(csv(['name'], [['Viewers'], ['Ghosts']]), {
      resource: 'groups',
      mode: 'delete',
    });
    expect(deleted.results.map((r) => r.status)).toEqual(['succeeded', 'skipped']);
    expect(await client.listGroups({ name: 'Viewers' })).toEqual([]);
    await client.close();
  });
});

describe('ACLs × every mode', () => {
  it('create by PUT without id, refuse a second create, upsert/update by groupId and name or by id', async () => {
    const client = pipeline.context.createAdminClient();
    const [group] = await client.postGroups([{ name: 'ACL owners' }]);
    const created = await pipeline.run(
      csv(
        ['name', 'groupId', 'description', 'revokedPermissions', 'hidden'],
        [
          ['Standard', String(group!.id), 'standard access', 'fileUpload|dragDrop', 'no'],
          ['Restricted', 'ACL owners', 'by group name', 'archive|notAKnownPermission', 'yes'],
        ],
      ),
      { resource: 'acls', mode: 'create' },
    );
    expect(created.info.state).toBe('completed');
    expect(created.results.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(String(created.results[0]!.id)).toMatch(new RegExp(`^\\d+_${group!.id}_[0-9A-F-]{36}$`));
    expect(created.results[1]!.warnings?.join(' ')).toMatch(/notAKnownPermission/);

    const acls = await client.listAcls({ groupId: group!.id });
    expect(acls.map((acl) => acl.name).sort()).toEqual(['Restricted', 'Standard']);
    expect(acls.find((acl) => acl.name === 'Restricted')).toMatchObject({ hidden: true });

    const again = await pipeline.run(csv(['name', 'groupId'], [['Standard', String(group!.id)]]), {
      resource: 'acls',
      mode: 'create',
    });
    expect(again.results[0]).toMatchObject({ status: 'failed', errorCode: 'ALREADY_EXISTS' });

    const standardId = String(created.results[0]!.id);
    const updated = await pipeline.run(
      csv(
        ['id', 'description'],
        [
          [standardId, 'updated by id'],
          ['0_999_00000000-0000-0000-0000-000000000000', 'no such acl'],
        ],
      ),
      { resource: 'acls', mode: 'update' },
    );
    expect(updated.results.map((r) => [r.status, r.errorCode])).toEqual([
      ['succeeded', undefined],
      ['failed', 'NOT_FOUND'],
    ]);
    const [standard] = await client.listAcls({ id: standardId });
    expect(standard).toMatchObject({
      description: 'updated by id',
      revokedPermissions: ['fileUpload', 'dragDrop'],
    });

    const upserted = await pipeline.run(
      csv(
        ['name', 'groupId', 'uploadForm'],
        [
          ['Standard', String(group!.id), 'Intake'],
          ['Guests', String(group!.id), ''],
        ],
      ),
      { resource: 'acls', mode: 'upsert' },
    );
    expect(upserted.results.map((r) => [r.action, r.status])).toEqual([
      ['update', 'succeeded'],
      ['create', 'succeeded'],
    ]);
    expect((await client.listAcls({ groupId: group!.id })).length).toBe(3);
    await client.close();
  });

  it('delete of ACLs is refused up front: the interface has no ACL DELETE', async () => {
    await expect(
      pipeline.submit(csv(['name', 'groupId'], [['x', '1']]), { resource: 'acls', mode: 'delete' }),
    ).rejects.toThrow(PorterError);
  });
});
