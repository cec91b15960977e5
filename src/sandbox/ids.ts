/** Identifiers the sandbox generates: ACL ids, default workspace ids, and a seeded PRNG. */
import { createHash, randomUUID } from 'node:crypto';

/**
 * An ACL id in the observed shape `<number>_<groupId>_<UUID>` (real example: `0_6_8A07B49F-...`).
 * The number is the ACL's position in its group when it was created; the UUID is upper case.
 */
export function makeAclId(position: number, groupId: number, uuid: string = randomUUID()): string {
  return `${position}_${groupId}_${uuid.toUpperCase()}`;
}

/**
 * The workspace an ACL created with empty `workspaces` gets: one per group, derived from
 * the group id, so it is stable across restarts without being stored.
 */
export function defaultWorkspaceId(groupId: number): string {
  const hex = createHash('sha1').update(`porter-sandbox-workspace:${groupId}`).digest('hex');
  return formatUuid(hex).toUpperCase();
}

/** A UUID (version 4 layout) drawn from a PRNG, for deterministic seeding. */
export function uuidFrom(random: () => number): string {
  let hex = '';
  for (let part = 0; part < 4; part++) {
    hex += Math.floor(random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  }
  return formatUuid(hex).toUpperCase();
}

function formatUuid(hex: string): string {
  const variant = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return (
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-` +
    `${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  );
}

/** mulberry32: a tiny, fast, seedable PRNG; the same seed always gives the same records. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
