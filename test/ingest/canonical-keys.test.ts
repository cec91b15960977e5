import { describe, expect, it } from 'vitest';
import { ingestItems, type Invalid } from './ingest-fixture.js';

describe('usernames and group names are refused, not repaired', () => {
  it.each([
    ['leading whitespace', '" alice"', /starts or ends with whitespace/],
    ['trailing whitespace', '"alice "', /starts or ends with whitespace/],
    ['NUL', '"al\\u0000ice"', /U\+0000/],
    ['a zero-width space', '"al\\u200Bice"', /U\+200B/],
    ['a left-to-right mark', '"\\u200Ealice"', /U\+200E/],
    ['a right-to-left override', '"al\\u202Eice"', /U\+202E/],
    ['a byte order mark', '"\\uFEFFalice"', /U\+FEFF/],
    ['a lone surrogate', '"al\\uD800ice"', /lone surrogate/],
  ])('a username with %s fails alone', async (_what, json, reason) => {
    const items = await ingestItems(`[{"username":${json}},{"username":"bob"}]`, {
      format: 'json',
    });
    expect(items[0]).toMatchObject({
      kind: 'invalid',
      errorCode: 'PORTER_ROW_INVALID',
      field: 'username',
    });
    expect((items[0] as Invalid).error).toMatch(reason);
    expect((items[0] as Invalid).key).toBeUndefined();
    expect(items[1]).toMatchObject({ kind: 'record', record: { username: 'bob' } });
  });

  it('refuses a group name with a control character, from CSV too', async () => {
    const items = await ingestItems('name,description\n"Sales\t",x\nSupport,y\n', {
      resource: 'groups',
      delimiter: ',',
    });
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'name' });
    expect((items[0] as Invalid).error).toMatch(/U\+0009/);
    expect(items[1]).toMatchObject({ kind: 'record', record: { name: 'Support' } });
  });

  it('refuses a lone surrogate in any string of a JSON record, not only in the key', async () => {
    const items = await ingestItems('{"username":"alice","firstName":"Al\\uDFFFice"}\n', {
      format: 'ndjson',
    });
    expect(items[0]).toMatchObject({ kind: 'invalid', field: 'firstName' });
    expect((items[0] as Invalid).error).toMatch(/"firstName": a string holds a lone surrogate/);
  });

  it('keeps a name with a well-formed pair of surrogates (an emoji) and inner spaces', async () => {
    const items = await ingestItems('[{"username":"Jean \\uD83D\\uDE00 Dupont"}]', {
      format: 'json',
    });
    expect(items[0]).toMatchObject({ kind: 'record', record: { username: 'Jean 😀 Dupont' } });
  });
});
