import { describe, expect, it } from 'vitest';
import { emailProblem } from '../../src/admin/email.js';
import { PorterError } from '../../src/errors/porter-error.js';
import { ingest } from '../../src/ingest/index.js';
import { ingestItems, ingestRecords } from './ingest-fixture.js';

describe('record validation', () => {
  it('requires a username for users, naming the row and field', async () => {
    const items = await ingestItems('username,email\nalice,a@example.com\n  ,b@example.com\n', {
      mode: 'create',
    });
    expect(items[1]).toMatchObject({
      kind: 'invalid',
      row: 2,
      line: 3,
      field: 'username',
      value: '  ',
      errorCode: 'PORTER_ROW_INVALID',
      error: 'row 2: field "username" is required',
    });
  });

  it('keeps the key of an invalid record that names one, so its report row says who it is', async () => {
    const items = await ingestItems('username,substitutionMap\nalice,{bad\n,{}\n', {
      mode: 'create',
    });
    expect(items[0]).toMatchObject({ kind: 'invalid', key: 'alice', field: 'substitutionMap' });
    expect(items[1]).toMatchObject({ kind: 'invalid', field: 'username' });
    expect((items[1] as { key?: string }).key).toBeUndefined();
  });

  it('refuses an email that is not an email address, naming the row, field and value', async () => {
    const items = await ingestItems(
      'username,email\nann,not-an-email\nbob,bob@example.com\ncid,\ndan,dan@x\neve,e ve@example.com\n',
      { mode: 'upsert' },
    );
    expect(items[0]).toMatchObject({
      kind: 'invalid',
      field: 'email',
      value: 'not-an-email',
      key: 'ann',
      errorCode: 'PORTER_ROW_INVALID',
      error: 'row 1: field "email" is not an email address: it has no "@"',
    });
    expect(items.map((item) => item.kind)).toEqual([
      'invalid',
      'record',
      'record',
      'record',
      'invalid',
    ]);
  });

  it('checks an email by a bounded rule', () => {
    for (const good of [
      'a@b.c',
      'ann@x',
      'jürgen.müller@bücher.de',
      "o'neil+hr@mail.example.org",
    ]) {
      expect(emailProblem(good)).toBeUndefined();
    }
    for (const bad of [
      'plain',
      '@x.org',
      'a@',
      'a@b..c',
      'a@-b.c',
      'a b@c.d',
      'a@b@c',
      `${'a'.repeat(65)}@b.c`,
      `a@${'b'.repeat(260)}.c`,
    ]) {
      expect(emailProblem(bad)).toBeDefined();
    }
  });

  it('requires a name for groups', async () => {
    const items = await ingestItems('name,priority\n,3\n', { resource: 'groups' });
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'name' });
  });

  it('requires name and groupId for ACLs, or an id', async () => {
    const items = await ingestItems('id,name,groupId\n,Read only,\n,,3\n1_3_abc,,\n,Editors,3\n', {
      resource: 'acls',
      mode: 'upsert',
    });
    expect(items.map((item) => (item.kind === 'invalid' ? item.field : 'ok'))).toEqual([
      'groupId',
      'name',
      'ok',
      'ok',
    ]);
  });

  it('lets a delete name the record by id or by key only', async () => {
    const users = await ingestRecords('userId,username\n17,\n,bob\n', { mode: 'delete' });
    expect(users.map((item) => item.record)).toEqual([{ userId: 17 }, { username: 'bob' }]);
    const groups = await ingestRecords('id,name\n4,\n', { resource: 'groups', mode: 'delete' });
    expect(groups[0].record).toEqual({ id: 4 });
    const neither = await ingestItems('userId,username,city\n,,Lyon\n', { mode: 'delete' });
    expect(neither[0]).toMatchObject({
      kind: 'invalid',
      error: 'row 1: field "username" is required (or userId)',
    });
  });

  it('refuses to delete ACLs before reading anything', () => {
    let pulled = false;
    const source = (async function* () {
      pulled = true;
      yield 'id\n1_2_x\n';
    })();
    let error: unknown;
    try {
      ingest(source, { resource: 'acls', mode: 'delete' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PorterError);
    expect((error as PorterError).code).toBe('PORTER_USAGE');
    expect((error as PorterError).message).toMatch(
      /^ACLs cannot be deleted through the admin interface/,
    );
    expect(pulled).toBe(false);
  });

  it('warns about unknown permission names but keeps them', async () => {
    const records = await ingestRecords(
      'name,groupId,revokedPermissions\nLimited,3,fileUpload|teleport|rss|fly\n',
      {
        resource: 'acls',
      },
    );
    expect(records[0].record.revokedPermissions).toEqual(['fileUpload', 'teleport', 'rss', 'fly']);
    expect(records[0].warnings).toEqual([
      'revokedPermissions: "teleport", "fly" are not a known permission name; sent as given',
    ]);
  });

  it('warns about user types outside the known ones but keeps them', async () => {
    const records = await ingestRecords('username,type\nalice,Superhero\nbob,General User\n');
    expect(records[0].record.type).toBe('Superhero');
    expect(records[0].warnings).toEqual([
      'type: "Superhero" is not a known user type (General User, Group Administrator, Global Administrator); sent as given',
    ]);
    expect(records[1].warnings).toEqual([]);
  });
});
