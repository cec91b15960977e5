/** --seed-users/--seed-groups/--seed-acls: realistic, deterministic, consistent, and linear. */
import { describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { withSandbox } from '../helpers/sandbox.js';

const SEED = { users: 500, groups: 25, acls: 60 };

describe('seeding', () => {
  it('the same counts give the same records', async () => {
    const first = await withSandbox({ seed: SEED }, async ({ store }) => ({
      users: store.users(),
      groups: store.groups(),
      acls: store.acls(),
    }));
    await withSandbox({ seed: SEED }, async ({ store }) => {
      expect(store.users()).toEqual(first.users);
      expect(store.groups()).toEqual(first.groups);
      expect(store.acls()).toEqual(first.acls);
    });
  });

  it('gives realistic records: unique usernames and names, emails, departments, memberships', async () => {
    await withSandbox({ seed: SEED }, async ({ store, client }) => {
      expect(store.counts()).toEqual(SEED);
      const users = await client.listUsers();
      expect(new Set(users.map((user) => user.username)).size).toBe(SEED.users);
      for (const user of users) {
        expect(user.email).toMatch(/^[a-z]+\.[a-z]+\.\d+@example\.com$/);
        expect(user.firstName).not.toBe('');
        expect(user.dept).not.toBe('');
        expect(user.groups?.length).toBeGreaterThan(0);
        expect(['General User', 'Group Administrator', 'Global Administrator']).toContain(
          user.type,
        );
      }
      const groups = await client.listGroups();
      expect(new Set(groups.map((group) => group.name)).size).toBe(SEED.groups);
      for (const group of groups) expect(group.loadingDockType).toBeLessThanOrEqual(3);
    });
  });

  it('memberships and ACLs are consistent from both sides', async () => {
    await withSandbox({ seed: SEED }, async ({ store }) => {
      const groups = new Map(store.groups().map((group) => [group.id, group]));
      let memberships = 0;
      for (const user of store.users()) {
        for (const groupId of user.groups ?? []) {
          expect(groups.get(groupId)?.users).toContain(user.userId);
          memberships++;
        }
      }
      const listed = [...groups.values()].reduce(
        (sum, group) => sum + (group.users?.length ?? 0),
        0,
      );
      expect(listed).toBe(memberships);
      for (const acl of store.acls()) {
        expect(groups.get(acl.groupId ?? 0)?.acls).toContain(acl.id);
        expect(acl.id).toMatch(new RegExp(`^\\d+_${acl.groupId}_[0-9A-F-]{36}$`));
      }
    });
  });

  it('seeds users alone, and many of them: 200,000 users, each found by id and username', async () => {
    await withSandbox({ seed: { users: 200_000 } }, async ({ store, client }) => {
      expect(store.counts().users).toBe(200_000);
      const [last] = await client.listUsers({ userId: 200_000 });
      expect(last?.groups).toEqual([]);
      expect(await client.listUsers({ username: last?.username ?? '' })).toHaveLength(1);
      const [created] = await client.postUsers([{ username: 'after.seed' }]);
      expect(created?.userId).toBe(200_001);
    });
  });

  it('seeded ACLs need seeded groups', async () => {
    let failure: unknown;
    try {
      await startSandbox({ port: 0, seed: { acls: 3 } });
    } catch (error) {
      failure = error;
    }
    expect(isPorterError(failure) && failure.code).toBe('PORTER_USAGE');
  });
});
