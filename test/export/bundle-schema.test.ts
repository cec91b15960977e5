/**
 * A bundle written by a real export reads back with the published schema of version 1, with
 * every record and references that resolve within the document; what is not a bundle of
 * version 1 is refused saying where.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExport } from '../../src/app/exports.js';
import { isBundleV1, parseBundleV1, type BundleV1 } from '../../src/export/bundle-schema.js';
import { startExportHarness, type ExportHarness } from './export-fixture.js';

let harness: ExportHarness;
let bundle: unknown;

beforeAll(async () => {
  harness = await startExportHarness({ sandbox: { seed: { users: 60, groups: 4, acls: 5 } } });
  const queued = await startExport(harness.pipeline.context, {
    resource: 'all',
    format: 'bundle',
    outDir: harness.outDir,
  });
  const info = await harness.waitExport(queued.id);
  expect(info.state).toBe('completed');
  bundle = JSON.parse(await readFile(join(info.dir, 'bundle.json'), 'utf8'));
});
afterAll(async () => harness?.close());

describe('the bundle schema', () => {
  it('reads a bundle an export wrote, with every record', () => {
    const parsed: BundleV1 = parseBundleV1(bundle);
    expect(isBundleV1(bundle)).toBe(true);
    const counts = harness.pipeline.sandbox.store.counts();
    expect({
      groups: parsed.groups.length,
      users: parsed.users.length,
      acls: parsed.acls.length,
    }).toEqual(counts);
    expect(parsed).toMatchObject({
      porter: 'bundle',
      version: 1,
      source: harness.pipeline.sandbox.url,
    });
    // references are ids that resolve within the document (nothing changed during this run)
    const groupIds = new Set(parsed.groups.map((group) => group.id));
    const userIds = new Set(parsed.users.map((user) => user.userId));
    for (const user of parsed.users) {
      for (const id of user.groups ?? []) expect(groupIds.has(id)).toBe(true);
    }
    for (const group of parsed.groups) {
      for (const id of group.users ?? []) expect(userIds.has(id)).toBe(true);
    }
    for (const acl of parsed.acls) expect(groupIds.has(acl.groupId!)).toBe(true);
  });

  it.each([
    ['another version', { version: 2 }],
    ['another kind', { porter: 'porter-export' }],
    ['a user without its id', { users: [{ username: 'ada' }] }],
    ['a key of a later version', { roles: [] }],
  ])('refuses %s with PORTER_INPUT_UNREADABLE', (_what, change) => {
    const changed = { ...(bundle as object), ...change };
    expect(isBundleV1(changed)).toBe(false);
    expect(() => parseBundleV1(changed)).toThrow(
      expect.objectContaining({
        code: 'PORTER_INPUT_UNREADABLE',
        message: expect.stringMatching(/not a porter bundle of version 1/),
      }),
    );
  });
});
