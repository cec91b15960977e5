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

  it('refuses a CSV with a header and no records, after giving the header', async () => {
    const outcome = await runIngest('username,email\n\n');
    expect(outcome.header?.columns).toEqual(['username', 'email']);
    expect(outcome.items).toEqual([]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
    expect(outcome.error?.message).toBe('The CSV upload has a header row but no records.');
  });

  it('refuses a CSV whose rows are all blank', async () => {
    const outcome = await runIngest('username,email\n,\n,\n');
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
  });

  it('refuses an empty JSON array', async () => {
    const outcome = await runIngest(' [ ] ');
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
    expect(outcome.error?.message).toMatch(/empty array/);
  });

  it('rejects the header promise too, without an unhandled rejection when nobody awaits it', async () => {
    const run = ingest('', { resource: 'users', mode: 'create' });
    await expect(run.header).rejects.toMatchObject({ code: 'PORTER_INPUT_EMPTY' });
    await expect(run.items.next()).rejects.toMatchObject({ code: 'PORTER_INPUT_EMPTY' });
  });
});
