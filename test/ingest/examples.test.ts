import { readFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadMapping } from '../../src/ingest/index.js';
import { ingestItems } from './ingest-fixture.js';

const example = (name: string): URL => new URL(`../../examples/${name}`, import.meta.url);

describe('the example files', () => {
  it('new-hires.csv with mapping.json: 20 users, the two planted mistakes refused', async () => {
    const mapping = loadMapping(
      JSON.parse(await readFile(example('mapping.json'), 'utf8')) as unknown,
      'users',
    );
    const items = await ingestItems(createReadStream(example('new-hires.csv')), {
      resource: 'users',
      mode: 'upsert',
      mapping,
    });
    expect(items).toHaveLength(20);
    const invalid = items.filter((item) => item.kind === 'invalid');
    expect(invalid.map((item) => [item.row, item.line, item.field, item.value])).toEqual([
      [11, 12, 'username', ''],
      [14, 15, 'primaryGroup', 'Legal'],
    ]);
    expect(items[1]).toMatchObject({
      kind: 'record',
      record: {
        username: 'jmuller',
        firstName: 'Jürgen',
        position: 'Engineer, Platform',
        groups: ['Staff', 'Engineering', 'Digital Asset Editors'],
        primaryGroup: 14,
        type: 'General User',
        status: 'Active',
      },
      warnings: [],
    });
  });

  it('groups.csv: every group valid; members come with the users, through their Teams', async () => {
    const items = await ingestItems(createReadStream(example('groups.csv')), {
      resource: 'groups',
      mode: 'upsert',
    });
    expect(items.every((item) => item.kind === 'record')).toBe(true);
    expect(items[4]).toMatchObject({
      record: { name: 'Legal', priority: 30, hidden: true },
    });
    expect(items.some((item) => item.kind === 'record' && 'users' in item.record)).toBe(false);
  });
});
