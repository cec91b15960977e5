/**
 * Realistic records generated at start-up: names, emails, departments, addresses and
 * memberships, from a seeded PRNG, so the same counts always give the same records.
 * Linear in the counts and light per user, so a million users seed in seconds.
 */
import { KNOWN_PERMISSIONS } from '../admin/schemas.js';
import {
  ACL_NAMES,
  COMPANIES,
  DEPARTMENTS,
  FIRST_NAMES,
  FORMS,
  LAST_NAMES,
  PLACES,
  ROLES,
  STREETS,
} from './seed-data.js';
import { defaultWorkspaceId, makeAclId, seededRandom, uuidFrom } from './ids.js';
import type { SeedOptions } from './options.js';
import type { SandboxStore } from './store.js';
import { makeAcl, makeGroup, makeUser } from './stored.js';

const PERMISSIONS = [...KNOWN_PERMISSIONS];

/** Fills an empty store with the given numbers of groups, users and ACLs. */
export function seedStore(store: SandboxStore, counts: SeedOptions, seed = 1): void {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const groupIds = seedGroups(store, counts.groups ?? 0, random, pick);
  seedUsers(store, counts.users ?? 0, groupIds, random, pick);
  seedAcls(store, counts.acls ?? 0, groupIds, random, pick);
}

type Pick = <T>(values: readonly T[]) => T;

function seedGroups(
  store: SandboxStore,
  count: number,
  random: () => number,
  pick: Pick,
): number[] {
  const ids: number[] = [];
  const combinations = DEPARTMENTS.length * ROLES.length;
  for (let index = 0; index < count; index++) {
    const dept = DEPARTMENTS[index % DEPARTMENTS.length] as string;
    const role = ROLES[Math.floor(index / DEPARTMENTS.length) % ROLES.length] as string;
    const round = Math.floor(index / combinations);
    const name = round === 0 ? `${dept} ${role}` : `${dept} ${role} ${round + 1}`;
    const id = store.peekNextGroupId();
    const slug = name.toLowerCase().replaceAll(' ', '-');
    store.putGroup(
      makeGroup({
        id,
        name,
        description: `${role} of the ${dept} department`,
        ldapDn: random() < 0.3 ? `cn=${slug},ou=groups,dc=example,dc=com` : '',
        priority: Math.floor(random() * 10),
        editLevel: Math.floor(random() * 5),
        viewLevel: Math.floor(random() * 5),
        loginText: random() < 0.2 ? `Welcome, ${dept} ${role.toLowerCase()}.` : '',
        loadingDockType: pick([0, 1, 2, 3]),
      }),
    );
    ids.push(id);
  }
  return ids;
}

function seedUsers(
  store: SandboxStore,
  count: number,
  groupIds: readonly number[],
  random: () => number,
  pick: Pick,
): void {
  // Pools of ready-made strings shared by many users keep a million users small in memory.
  const addresses = STREETS.flatMap((street) =>
    Array.from({ length: 400 }, (_, n) => `${n + 1} ${street}`),
  );
  const phones = Array.from({ length: 10_000 }, (_, n) => `+1 555 ${String(n).padStart(4, '0')}`);
  const extensions = Array.from({ length: 900 }, (_, n) => String(100 + n));
  for (let index = 0; index < count; index++) {
    const userId = store.peekNextUserId();
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const [city, state, zip, country] = pick(PLACES);
    // Now and then a username with a space: the spec says the product accepts them.
    const username =
      random() < 0.005 ? `${first} ${last} ${userId}` : `${first}.${last}${userId}`.toLowerCase();
    const roll = random();
    const groups: number[] = [];
    if (groupIds.length > 0) {
      const memberships = Math.min(groupIds.length, 1 + Math.floor(random() * 3));
      while (groups.length < memberships) {
        const groupId = pick(groupIds);
        if (!groups.includes(groupId)) groups.push(groupId);
      }
    }
    store.putUser(
      makeUser(userId, username, {
        firstName: first,
        middleName: random() < 0.1 ? pick(FIRST_NAMES) : '',
        lastName: last,
        company: pick(COMPANIES),
        dept: pick(DEPARTMENTS),
        address1: pick(addresses),
        city,
        state,
        zip,
        country,
        phone: pick(phones),
        ext: random() < 0.3 ? pick(extensions) : '',
        email: `${first}.${last}.${userId}@example.com`.toLowerCase(),
        type:
          roll < 0.001
            ? 'Global Administrator'
            : roll < 0.01
              ? 'Group Administrator'
              : 'General User',
        status: random() < 0.03 ? 'Locked' : 'Active',
      }),
      groups,
    );
  }
}

function seedAcls(
  store: SandboxStore,
  count: number,
  groupIds: readonly number[],
  random: () => number,
  pick: Pick,
): void {
  if (groupIds.length === 0) return;
  for (let index = 0; index < count; index++) {
    const groupId = groupIds[index % groupIds.length] as number;
    const position = store.aclCountOf(groupId);
    const base = ACL_NAMES[position % ACL_NAMES.length] as string;
    const round = Math.floor(position / ACL_NAMES.length);
    const forms = FORMS.filter(() => random() < 0.4);
    store.putAcl(
      makeAcl({
        id: makeAclId(position, groupId, uuidFrom(random)),
        name: round === 0 ? base : `${base} ${round + 1}`,
        groupId,
        description: random() < 0.5 ? `${base} access for group ${groupId}` : '',
        hidden: random() < 0.1,
        revokedPermissions: PERMISSIONS.filter(() => random() < 0.15),
        rootPath: random() < 0.5 ? `/Assets/${pick(DEPARTMENTS)}` : '',
        workspaces: [defaultWorkspaceId(groupId)],
        searchFilter: random() < 0.2 ? 'status:approved' : null,
        forms,
        uploadForm: forms[0] ?? '',
      }),
    );
  }
}
