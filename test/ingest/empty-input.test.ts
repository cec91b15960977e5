import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/index.js';
import { runIngest } from './ingest-fixture.js';

describe('empty uploads', () => {
  it.each([
    ['an empty file', ''],
    ['only blank lines', '\n\r\n  \n'],
  ])('refuses %s with PORTER_INPUT_EMPTY', async (_name, text) => {
    const outcome = await runIngest(text);
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
    expect(outcome.error?.message).toMatch(/empty/);
  });

  it('takes a CSV with a header and no records as an empty feed, header given', async () => {
    const outcome = await runIngest('username,email\n\n');
    expect(outcome.header?.columns).toEqual(['username', 'email']);
    expect(outcome.items).toEqual([]);
    expect(outcome.error).toBeUndefined();
  });

  it('a sync refuses a CSV with a header and no records: it would lock or delete everyone', async () => {
    const outcome = await runIngest('username,email\n\n', { mode: 'sync' });
    expect(outcome.header?.columns).toEqual(['username', 'email']);
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
    expect(outcome.error?.message).toBe(
      'The CSV upload has a header row but no records. A sync of no records would lock or delete every record in its scope: nothing is done.',
    );
  });

  it('a CSV whose rows are all blank is an empty feed too; a sync refuses it', async () => {
    expect((await runIngest('username,email\n,\n,\n')).error).toBeUndefined();
    const sync = await runIngest('username,email\n,\n,\n', { mode: 'sync' });
    expect(sync.error?.code).toBe('PORTER_INPUT_EMPTY');
  });

  it('an empty JSON array is an empty feed; a sync refuses it', async () => {
    const outcome = await runIngest(' [ ] ');
    expect(outcome.error).toBeUndefined();
    expect(outcome.items).toEqual([]);
    const sync = await runIngest(' [ ] ', { mode: 'sync' });
    expect(sync.error?.code).toBe('PORTER_INPUT_EMPTY');
    expect(sync.error?.message).toMatch(/empty array/);
  });

  it('rejects the header promise too, without an unhandled rejection when nobody awaits it', async () => {
    const run = ingest('', { resource: 'users', mode: 'create' });
    await expect(run.header).rejects.toMatchObject({ code: 'PORTER_INPUT_EMPTY' });
    await expect(run.items.next()).rejects.toMatchObject({ code: 'PORTER_INPUT_EMPTY' });
  });
});
