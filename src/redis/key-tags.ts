/**
 * Hash tags: which of porter's keys share a Redis Cluster slot. Every key one script, MULTI or
 * pipeline touches must sit in one slot, and work should still spread over the Cluster's nodes,
 * so each BullMQ queue has a slot of its own (BullMQ's scripts touch many keys of a queue), and
 * so has each import, export, migration and diff for its data. On a single Redis the tags are
 * plain characters of the key.
 *
 * A PORTER_PREFIX that is itself a hash tag (`{porter}`) wins over these: Redis hashes the first
 * `{…}` of a key, so every key then sits in the prefix's one slot.
 */

/** `{value}`: the part of a key Redis Cluster hashes. */
export function hashTag(value: string): string {
  return `{${value}}`;
}

/** The BullMQ prefix of a queue: all its keys in one slot, each queue in its own. */
export function queuePrefix(prefix: string, queueName: string): string {
  return `${prefix}:${hashTag(queueName)}`;
}

/** The start of every key of one import: `<p>:import:{<id>}`. */
export function importKeyBase(prefix: string, importId: string): string {
  return `${prefix}:import:${hashTag(importId)}`;
}

/**
 * A key of who may do what and who did: `<p>:{security}:<name>`. The token store and the audit
 * stream are written together in one MULTI (a token and its event), so they share a slot.
 */
export function securityKey(prefix: string, name: 'tokens' | 'audit'): string {
  return `${prefix}:${hashTag('security')}:${name}`;
}
