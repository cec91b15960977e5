import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/index.js';

/** A long upload made on demand, counting how much of it was pulled and whether it was closed. */
function endlessUpload(format: 'csv' | 'ndjson', rowsPerChunk = 10, chunks = 10_000) {
  const state = { pulled: 0, closed: false };
  async function* generate(): AsyncGenerator<string> {
    try {
      if (format === 'csv') yield 'username,city\n';
      for (let chunk = 0; chunk < chunks; chunk++) {
        state.pulled++;
        let text = '';
        for (let row = 0; row < rowsPerChunk; row++) {
          const name = `user${chunk * rowsPerChunk + row}`;
          text += format === 'csv' ? `${name},Lyon\n` : `{"username":"${name}"}\n`;
        }
        yield text;
      }
    } finally {
      state.closed = true;
    }
  }
  return { source: generate(), state };
}

describe('streaming', () => {
  it.each(['csv', 'ndjson'] as const)(
    'reads a %s upload only as far as the consumer pulled',
    async (format) => {
      const { source, state } = endlessUpload(format);
      const { items } = ingest(source, { resource: 'users', mode: 'create' });
      let taken = 0;
      for await (const item of items) {
        expect(item.kind).toBe('record');
        if (++taken === 25) break;
      }
      // 25 records are 3 chunks of 10; the parser may look one chunk ahead
      expect(state.pulled).toBeLessThanOrEqual(5);
      expect(state.closed).toBe(true);
    },
  );

  it('reads the header without reading the records', async () => {
    const { source, state } = endlessUpload('csv');
    const run = ingest(source, { resource: 'users', mode: 'create' });
    expect((await run.header).columns).toEqual(['username', 'city']);
    expect(state.pulled).toBeLessThanOrEqual(2);
    const first = await run.items.next();
    expect(first.value).toMatchObject({ row: 1, record: { username: 'user0' } });
    await run.items.return(undefined);
    expect(state.closed).toBe(true);
  });

  it('closes the source when the upload is refused', async () => {
    const { source, state } = endlessUpload('csv');
    const run = ingest(source, { resource: 'groups', mode: 'create' });
    await expect(run.items.next()).rejects.toMatchObject({ code: 'PORTER_INPUT_UNKNOWN_COLUMN' });
    expect(state.closed).toBe(true);
  });

  it('reads from a Node readable stream', async () => {
    const { Readable } = await import('node:stream');
    const stream = Readable.from([Buffer.from('username\nalice\n'), Buffer.from('bob\n')]);
    const items = [];
    for await (const item of ingest(stream, { resource: 'users', mode: 'create' }).items)
      items.push(item);
    expect(
      items.map((item) => (item.kind === 'record' ? item.record.username : undefined)),
    ).toEqual(['alice', 'bob']);
  });
});
