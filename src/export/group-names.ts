/**
 * Group id → name, gathered while the groups are read, so users' `groups` and ACLs' `groupId`
 * can be written as names. A fingerprint of the (id, name) pairs tells whether the groups
 * changed between the start and the end of an export.
 */
import { createHash } from 'node:crypto';

/** How many groups there were and a digest of their ids and names. */
export interface GroupsPicture {
  count: number;
  sha256: string;
}

/** Names of the groups read, by id. */
export class GroupNames {
  private readonly byId = new Map<number, string>();

  /** Remembers one group read from the server. */
  add(group: Readonly<Record<string, unknown>>): void {
    if (typeof group.id === 'number' && typeof group.name === 'string') {
      this.byId.set(group.id, group.name);
    }
  }

  /** The name of a group id, when it was seen. */
  nameOf(id: number): string | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Count and digest of the groups seen, independent of the order they came in. */
  picture(): GroupsPicture {
    const hash = createHash('sha256');
    const ids = [...this.byId.keys()].sort((a, b) => a - b);
    for (const id of ids) hash.update(`${id}\u0000${this.byId.get(id) ?? ''}\u0000`);
    return { count: ids.length, sha256: hash.digest('hex') };
  }
}
