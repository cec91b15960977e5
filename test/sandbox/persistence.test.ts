/**
 * --data FILE: a snapshot plus a journal of every change; the state survives a restart, and a
 * write is in the journal before its answer.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import { startSandbox } from '../../src/sandbox/server.js';
import type { SandboxStore } from '../../src/sandbox/store.js';
import { startTestSandbox } from '../helpers/sandbox.js';

/** Everything a client can read back, for comparing two sandboxes. */
function stateOf(store: SandboxStore): unknown {
  return { users: store.users(), groups: store.groups(), acls: store.acls() };
}

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
    const before = stateOf(first.store);
    await first.close();

    const second = await startTestSandbox({ dataFile });
    try {
      expect(stateOf(second.store)).toEqual(before);
      const [user] = await second.client.postUsers([{ username: 'next' }]);
      expect(user?.userId).toBe(4);
      const [group] = await second.client.postGroups([{ name: 'Next' }]);
      expect(group?.id).toBe(4);
    } finally {
      await second.close();
    }
  });

  it('survives a restart after updates: profiles, memberships from either side, ACLs, renames', async () => {
    const first = await startTestSandbox({ dataFile });
    await first.client.postGroups([{ name: 'A' }, { name: 'B' }, { name: 'C' }]);
    const users = await first.client.postUsers([
      { username: 'u1', groups: [1] },
      { username: 'u2', groups: [1, 2] },
      { username: 'u3' },
    ]);
    const [acl] = await first.client.putAcls([{ name: 'Read', groupId: 3 }]);
    await first.client.putUsers([
      { userId: users[0]?.userId, username: 'u1-renamed', city: 'Lyon', groups: [2, 3] },
    ]);
    await first.client.putGroups([{ id: 1, name: 'A-renamed', users: [users[2]?.userId ?? 0] }]);
    await first.client.putAcls([{ id: acl?.id, name: 'Write', forms: ['f1'] }]);
    await first.client.deleteUsers([{ userId: users[1]?.userId }]);
    await first.client.deleteGroups([{ id: 3 }]);
    const before = stateOf(first.store);
    await first.close();

    const second = await startTestSandbox({ dataFile });
    try {
      expect(stateOf(second.store)).toEqual(before);
      expect(second.store.userByName('u1-renamed')?.groups).toEqual([2]);
      expect(second.store.acls()).toEqual([]);
      const [user] = await second.client.postUsers([{ username: 'u4' }]);
      expect(user?.userId).toBe(4);
    } finally {
      await second.close();
    }
  });

  it('an answered write is on disk before its answer: a copy taken without close() holds it', async () => {
    const test = await startTestSandbox({ dataFile });
    const copy = join(dir, 'copy');
    try {
      await test.client.postUsers([{ username: 'durable.ada' }, { username: 'durable.alan' }]);
      await test.client.deleteUsers([{ username: 'durable.alan' }]);
      await cp(join(dir, 'nested'), copy, { recursive: true });
    } finally {
      await test.close();
    }
    const recovered = await startTestSandbox({ dataFile: join(copy, 'state.ndjson') });
    try {
      expect(recovered.store.users().map((user) => user.username)).toEqual(['durable.ada']);
    } finally {
      await recovered.close();
    }
  });

  it('a burst of concurrent writes takes a few coalesced journal writes, and no temp file is left', async () => {
    const test = await startTestSandbox({ dataFile });
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        test.client.postUsers([{ username: `user${index}` }]),
      ),
    );
    const users = test.store.users();
    expect(users).toHaveLength(50);
    expect(test.store.stats.saves).toBeGreaterThan(0);
    expect(test.store.stats.saves).toBeLessThan(50);
    await test.close();
    expect(await readdir(join(dir, 'nested'))).toEqual(['state.ndjson.journal']);
    const journal = await readFile(`${dataFile}.journal`, 'utf8');
    expect(journal.split('\n').filter(Boolean)).toHaveLength(50);
    const second = await startTestSandbox({ dataFile });
    try {
      expect(second.store.users()).toEqual(users);
    } finally {
      await second.close();
    }
  });

  it('GET does not save; close() with nothing changed does not either', async () => {
    const test = await startTestSandbox({ dataFile });
    await test.client.listUsers();
    await test.close();
    expect(test.store.stats.saves).toBe(0);
    expect(test.store.stats.compactions).toBe(0);
  });

  it('seeds an empty file once, as a snapshot; a restart with the same seed flags keeps the saved state', async () => {
    const seed = { users: 20, groups: 3, acls: 4 };
    const first = await startTestSandbox({ dataFile, seed });
    expect(first.store.stats).toMatchObject({ saves: 0, compactions: 1 });
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

  it('loads a whole-state file of version 1 (before the journal) as the snapshot', async () => {
    await writeFile(
      join(dir, 'v1.ndjson'),
      [
        '{"format":"porter-sandbox","version":1,"nextUserId":9,"nextGroupId":3}',
        '{"group":{"id":2,"name":"Old group"}}',
        '{"user":{"userId":7,"username":"old.user","groups":[2]}}',
        '{"acl":{"id":"0_2_X","name":"Read","groupId":2,"workspaces":["W"]}}',
        '',
      ].join('\n'),
    );
    const test = await startTestSandbox({ dataFile: join(dir, 'v1.ndjson') });
    try {
      expect(test.store.counts()).toEqual({ users: 1, groups: 1, acls: 1 });
      expect(test.store.user(7)?.groups).toEqual([2]);
      const [user] = await test.client.postUsers([{ username: 'new.user' }]);
      expect(user?.userId).toBe(9);
    } finally {
      await test.close();
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
