import { describe, expect, it } from 'vitest';
import { ingestRecords, runIngest } from './ingest-fixture.js';

describe('service and identity fields', () => {
  it("accepts groups' acls column, as exports carry it, but drops it with a warning", async () => {
    const outcome = await runIngest('id,name,acls\n4,Sales,1_4_abc|2_4_def\n5,Support,\n', {
      resource: 'groups',
    });
    expect(outcome.header?.fields).toEqual({ id: 'id', name: 'name' });
    expect(outcome.items).toMatchObject([
      {
        kind: 'record',
        record: { id: 4, name: 'Sales' },
        warnings: ['column "acls" is supplied by the service; its value was not sent'],
      },
      { kind: 'record', record: { id: 5, name: 'Support' }, warnings: [] },
    ]);
  });

  it('keeps ids: integers for users and groups, strings for ACLs', async () => {
    const users = await ingestRecords('userId,username\n17,alice\n');
    expect(users[0].record).toEqual({ userId: 17, username: 'alice' });
    const acls = await ingestRecords('id,name\n1_3_0b5e,Read only\n', { resource: 'acls' });
    expect(acls[0].record).toEqual({ id: '1_3_0b5e', name: 'Read only' });
  });
});
