import { describe, expect, it } from 'vitest';
import { ingestItems, ingestRecords, runIngest } from './ingest-fixture.js';

describe('columns to fields', () => {
  it('match field names case-insensitively, ignoring surrounding spaces', async () => {
    const outcome = await runIngest('UserName, FIRSTNAME ,lastname\nalice,Alice,Martin\n');
    expect(outcome.header?.fields).toEqual({
      UserName: 'username',
      ' FIRSTNAME ': 'firstName',
      lastname: 'lastName',
    });
    expect(outcome.items[0]).toMatchObject({
      kind: 'record',
      input: { UserName: 'alice', ' FIRSTNAME ': 'Alice', lastname: 'Martin' },
      record: { username: 'alice', firstName: 'Alice', lastName: 'Martin' },
    });
  });

  it('stop the import before any record when a CSV column matches no field', async () => {
    const outcome = await runIngest('username,Department,Manager\nalice,Sales,bob\n');
    expect(outcome.items).toEqual([]);
    expect(outcome.header).toBeUndefined();
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNKNOWN_COLUMN');
    expect(outcome.error?.message).toMatch(
      /Columns "Department", "Manager" match no field of users/,
    );
    expect(outcome.error?.message).toMatch(/"columns": \{"Department": "<field>"\}/);
    expect(outcome.error?.message).toMatch(/"ignore": \["Department"\]/);
    expect(outcome.error?.details).toMatchObject({ columns: ['Department', 'Manager'] });
  });

  it('refuse a header column without a name', async () => {
    const outcome = await runIngest('username,,city\nalice,x,Lyon\n');
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNKNOWN_COLUMN');
    expect(outcome.error?.message).toMatch(/a column without a name/);
  });

  it('refuse a column named twice, or two columns filling one field', async () => {
    const twice = await runIngest('username,City,city\nalice,Lyon,Nice\n');
    expect(twice.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(twice.error?.message).toMatch(/appears twice/);
    const clash = await runIngest('username,Login\nalice,al\n', {
      mapping: { columns: { Login: 'username' }, ignore: [], defaults: {} },
    });
    expect(clash.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(clash.error?.message).toMatch(/both fill field "username"/);
  });

  it('stop a JSON upload at an unknown key, naming the row and the key, like a CSV column', async () => {
    const outcome = await runIngest(
      '[{"username":"alice"},{"username":"bob","Department":"Sales"},{"UserName":"carol"}]',
    );
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNKNOWN_COLUMN');
    expect(outcome.error?.message).toMatch(/^Row 2: Column "Department" matches no field of users/);
    expect(outcome.error?.details).toMatchObject({ row: 2, field: 'Department' });
    const ndjson = await runIngest('{"username":"alice","shoe":1}\n');
    expect(ndjson.error?.message).toMatch(/^Row 1: Column "shoe"/);
  });

  it('give JSON headers the keys of the first record', async () => {
    const outcome = await runIngest('{"UserName":"alice","city":"Lyon"}\n{"username":"bob"}\n');
    expect(outcome.header).toEqual({
      format: 'ndjson',
      columns: ['UserName', 'city'],
      fields: { UserName: 'username', city: 'city' },
    });
  });

  it('make a JSON record naming one field twice invalid', async () => {
    const items = await ingestItems('[{"username":"alice","UserName":"bob"}]');
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'username' });
    expect((items[0] as { error: string }).error).toMatch(/given twice/);
  });

  it('work the same for groups and ACLs', async () => {
    const groups = await ingestRecords('Name,Priority\nSales,3\n', { resource: 'groups' });
    expect(groups[0].record).toEqual({ name: 'Sales', priority: 3 });
    const acls = await ingestRecords('NAME,GROUPID,UPLOADFORM\nRead only,12,Basic\n', {
      resource: 'acls',
    });
    expect(acls[0].record).toEqual({ name: 'Read only', groupId: 12, uploadForm: 'Basic' });
  });
});
