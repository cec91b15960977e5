/** --data FILE: loaded at start, saved after every change (temp file, then rename), survives a restart. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { startTestSandbox } from '../helpers/sandbox.js';

describe('persistence', () => {
  let dir: string;
  let dataFile: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'porter-sandbox-'));
    dataFile = join(dir, 'nested', 'state.ndjson');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('survives a restart: records, memberships, ACLs, and ids that are never given out twice', async () => {
    const first = await startTestSandbox({ dataFile });
    await first.client.postGroups([{ name: 'Editors', ldapDn: 'cn=e' }, { name: 'Viewers' }]);
    await first.client.postUsers([
      { username: 'ada', firstName: 'Ada', groups: [1, 2], substitutionMap: { a: 'b' } },
      { username: 'alan', groups: [2] },
      { username: 'gone' },
    ]);
    await first.client.putAcls([{ name: 'Read', groupId: 2, revokedPermissions: ['rss'] }]);
    await first.client.deleteUsers([{ username: 'gone' }]);
    await first.client.deleteGroups([{ name: 'Viewers' }]);
    await first.client.postGroups([{ name: 'Others' }]);
    const before = {
      users: first.store.users(),
      groups: first.store.groups(),
      acls: first.store.acls(),
    };
    await first.close();

    const second = await startTestSandbox({ dataFile });
    try {
      expect({
        users: second.store.users(),
        groups: second.store.groups(),
        acls: second.store.acls(),
      }).toEqual(before);
      const [user] = await second.client.postUsers([{ username: 'next' }]);
      expect(user?.userId).toBe(4);
      const [group] = await second.client.postGroups([{ name: 'Next' }]);
      expect(group?.id).toBe(4);
    } finally {
      await second.close();
    }
  });

  it('a write is on disk before its answer arrives (no close needed)', async () => {
    const test = await startTestSandbox({ dataFile });
    try {
      await test.client.postUsers([{ username: 'durable.ada' }]);
      expect(await readFile(dataFile, 'utf8')).toContain('"durable.ada"');
      await test.client.deleteUsers([{ username: 'durable.ada' }]);
      expect(await readFile(dataFile, 'utf8')).not.toContain('durable.ada');
    } finally {
      await test.close();
    }
  });

  it('a burst of concurrent writes is saved in a few coalesced saves, and no temp file is left', async () => {
    const test = await startTestSandbox({ dataFile });
    try {
      await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          test.client.postUsers([{ username: `user${index}` }]),
        ),
      );
      expect(test.store.counts().users).toBe(50);
      expect(test.store.stats.saves).toBeGreaterThan(0);
      expect(test.store.stats.saves).toBeLessThan(50);
      const text = await readFile(dataFile, 'utf8');
      for (let index = 0; index < 50; index++) expect(text).toContain(`"user${index}"`);
      expect(await readdir(join(dir, 'nested'))).toEqual(['state.ndjson']);
    } finally {
      await test.close();
    }
  });

  it('GET does not save; close() with nothing changed does not either', async () => {
    const test = await startTestSandbox({ dataFile });
    await test.client.listUsers();
    await test.close();
    expect(test.store.stats.saves).toBe(0);
  });

  it('seeds an empty file once; a restart with the same seed flags keeps the saved state', async () => {
    const seed = { users: 20, groups: 3, acls: 4 };
    const first = await startTestSandbox({ dataFile, seed });
    await first.client.postUsers([{ username: 'added' }]);
    const users = first.store.users();
    await first.close();
    const second = await startTestSandbox({ dataFile, seed });
    try {
      expect(second.store.counts()).toEqual({ users: 21, groups: 3, acls: 4 });
      expect(second.store.users()).toEqual(users);
    } finally {
      await second.close();
    }
  });

  it('a corrupt data file stops start-up with PORTER_CONFIG_INVALID naming the line', async () => {
    const file = join(dir, 'bad.ndjson');
    await writeFile(
      file,
      '{"format":"porter-sandbox","version":1,"nextUserId":1,"nextGroupId":1}\n{"user":{"userId":"x"}}\n',
    );
    let failure: unknown;
    try {
      await startSandbox({ port: 0, dataFile: file });
    } catch (error) {
      failure = error;
    }
    expect(isPorterError(failure) && failure.code).toBe('PORTER_CONFIG_INVALID');
    expect((failure as Error).message).toContain('line 2');
  });
});
