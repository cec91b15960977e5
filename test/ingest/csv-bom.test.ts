import { describe, expect, it } from 'vitest';
import { chunked, ingestRecords, runIngest } from './ingest-fixture.js';

const BOM = '\ufeff';

describe('CSV byte order mark', () => {
  it('is stripped, so the first column keeps its name', async () => {
    const outcome = await runIngest(`${BOM}username,city\nalice,Lyon\n`);
    expect(outcome.header?.columns).toEqual(['username', 'city']);
    expect(outcome.items).toMatchObject([
      { kind: 'record', record: { username: 'alice', city: 'Lyon' } },
    ]);
  });

  it('is stripped when it arrives one byte at a time', async () => {
    const records = await ingestRecords(chunked(`${BOM}username\nalice\n`, 1));
    expect(records.map((item) => item.record)).toEqual([{ username: 'alice' }]);
  });

  it('is stripped from JSON and NDJSON uploads too', async () => {
    const json = await ingestRecords(`${BOM}[{"username":"alice"}]`);
    expect(json[0].record).toEqual({ username: 'alice' });
    const ndjson = await ingestRecords(`${BOM}{"username":"alice"}\n`);
    expect(ndjson[0].record).toEqual({ username: 'alice' });
  });

  it('does not count as content: a file with only a BOM is empty', async () => {
    const outcome = await runIngest(BOM);
    expect(outcome.error?.code).toBe('PORTER_INPUT_EMPTY');
  });
});
