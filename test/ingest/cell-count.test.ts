import { describe, expect, it } from 'vitest';
import { ingestItems } from './ingest-fixture.js';

describe('CSV rows with a different number of cells than the header', () => {
  it('are invalid records naming the row; the rows around them go on', async () => {
    const items = await ingestItems(
      'username,city,zip\nalice,Lyon,69001\nbob,Nice\ncarol,Paris,75001,extra\ndan,Metz,57000\n',
    );
    expect(items.map((item) => [item.kind, item.row])).toEqual([
      ['record', 1],
      ['invalid', 2],
      ['invalid', 3],
      ['record', 4],
    ]);
    expect(items[1]).toMatchObject({
      kind: 'invalid',
      line: 3,
      errorCode: 'PORTER_ROW_INVALID',
      error: 'row 2: the row has 2 cells but the header has 3 columns',
      input: { username: 'bob', city: 'Nice' },
    });
  });

  it('keep extra cells in input under their position, for the report', async () => {
    const items = await ingestItems('username,city\ncarol,Paris,extra\n');
    expect(items[0].input).toEqual({ username: 'carol', city: 'Paris', '#3': 'extra' });
  });
});
