import { describe, expect, it } from 'vitest';
import { ingestRecords } from './ingest-fixture.js';

describe('names or ids in reference fields', () => {
  it("turns all-digit items of a user's groups into ids and keeps names as strings", async () => {
    const records = await ingestRecords('username,groups\nalice,Sales | 12 |Support 2|007\n');
    expect(records[0].record.groups).toEqual(['Sales', 12, 'Support 2', 7]);
  });

  it('does the same for the users of a group (ids or usernames)', async () => {
    const records = await ingestRecords('name,users\nSales,alice|42|bob\n', { resource: 'groups' });
    expect(records[0].record.users).toEqual(['alice', 42, 'bob']);
  });

  it('reads an ACL groupId as an id or a group name', async () => {
    const records = await ingestRecords('name,groupId\nRead only,12\nEditors,Marketing\n', {
      resource: 'acls',
    });
    expect(records.map((item) => item.record.groupId)).toEqual([12, 'Marketing']);
  });

  it('accepts JSON numbers, digit strings and names alike', async () => {
    const records = await ingestRecords('[{"username":"alice","groups":[3,"4","Sales"]}]');
    expect(records[0].record.groups).toEqual([3, 4, 'Sales']);
  });
});
