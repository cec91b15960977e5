/** Counters the sandbox keeps so tests can assert what reached it and what it did. */
import type { ResourceName } from '../admin/resources.js';

export type WriteMethod = 'PUT' | 'POST' | 'DELETE';

export interface AppliedCounts {
  created: number;
  updated: number;
  deleted: number;
}

export interface SandboxStats {
  /** Requests that reached an admin route, per HTTP method (refused ones included). */
  requests: { GET: number; PUT: number; POST: number; DELETE: number };
  /** Write requests per resource and method (refused ones included). */
  writes: Record<ResourceName, Record<WriteMethod, number>>;
  /** Records applied, per resource and action. */
  applied: Record<ResourceName, AppliedCounts>;
  /** Injected faults and limits that fired; `delayed` counts answers held back by latencyMs. */
  faults: {
    failed: number;
    dropped: number;
    rateLimited: number;
    tooManyRecords: number;
    delayed: number;
  };
  /** Requests refused, per errorcode (ALREADY_EXISTS, NOT_FOUND, …), injected faults aside. */
  refusals: Record<string, number>;
  /** Writes to the data file's journal (one per group of concurrent write requests). */
  saves: number;
  /** Snapshots written to the data file (compactions and the one after seeding). */
  compactions: number;
}

const writes = (): Record<WriteMethod, number> => ({ PUT: 0, POST: 0, DELETE: 0 });
const applied = (): AppliedCounts => ({ created: 0, updated: 0, deleted: 0 });

/** All counters at zero. */
export function emptyStats(): SandboxStats {
  return {
    requests: { GET: 0, PUT: 0, POST: 0, DELETE: 0 },
    writes: { users: writes(), groups: writes(), acls: writes() },
    applied: { users: applied(), groups: applied(), acls: applied() },
    faults: { failed: 0, dropped: 0, rateLimited: 0, tooManyRecords: 0, delayed: 0 },
    refusals: {},
    saves: 0,
    compactions: 0,
  };
}
