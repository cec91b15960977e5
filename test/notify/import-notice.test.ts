/**
 * Which import ends tell anyone (src/notify/import-notice.ts): what SCIM keeps as imports (an
 * hour's journal, a held plan) tells no one at its end; a file's import and a held sync do.
 */
import { describe, expect, it } from 'vitest';
import type { ImportInfo } from '../../src/model/import.js';
import { importNotice } from '../../src/notify/import-notice.js';

function info(fields: Partial<ImportInfo>): ImportInfo {
  return {
    id: 'imp_notice',
    total: 3,
    options: { resource: 'users', mode: 'upsert', target: 'prod' },
    counts: { succeeded: 3, failed: 0, skipped: 0, unprocessed: 0, planned: 0 },
    ...fields,
  } as unknown as ImportInfo;
}

describe('the end of an import', () => {
  it('a file import that completed is told as import.finished', () => {
    expect(importNotice(info({ state: 'completed', source: 'feed.csv' }))?.name).toBe(
      'import.finished',
    );
  });

  it('a held sync is told as sync.held with its counts', () => {
    const held = info({
      state: 'held',
      source: 'directory.csv',
      options: { resource: 'users', mode: 'sync', target: 'prod' } as ImportInfo['options'],
      sync: { locks: 10, deletes: 0, threshold: 1, inScope: 12 } as ImportInfo['sync'],
    });
    expect(importNotice(held)).toMatchObject({ name: 'sync.held', counts: { locks: 10 } });
  });

  it("SCIM's journal of an hour and its held plan tell no one (the plan is told as scim.deletes_held)", () => {
    expect(importNotice(info({ state: 'completed', source: 'scim' }))).toBeUndefined();
    expect(importNotice(info({ state: 'held', source: 'scim' }))).toBeUndefined();
  });
});
