/**
 * Finding the DAM record that is a row's, by the source's own id (the anchor) first, then by the
 * mapping's join rule for a record that holds no anchor yet. Built from a read of the DAM's users
 * (or groups): a snapshot, a streamed GET, a page of an export. Every source of rows (a file, a
 * SCIM request, a directory read) matches through this one module.
 *
 * ```ts
 * const index = AnchorIndex.of('users', damUsers, 'porterAnchor');
 * const match = index.match({ anchor: 'E1001', key: 'jmueller', email: 'jose@x' }, 'username');
 * // { kind: 'anchored', current } | { kind: 'joined', by, current } | { kind: 'new' } | { kind: 'conflict', reason }
 * ```
 */
import type { ResourceName } from '../admin/resources.js';
import type { JoinRule } from './anchor-settings.js';
import { readAnchor } from './anchor-field.js';

type DamRecord = Record<string, unknown>;

/** What a row offers to be matched by: its anchor, its key (username or group name), its email. */
export interface AnchorCandidate {
  anchor: string;
  key?: string;
  email?: string;
}

export type AnchorMatch =
  /** The DAM record holding the anchor: the row's, whatever its key or email is now. */
  | { kind: 'anchored'; current: DamRecord }
  /** A DAM record without an anchor, recognised by the join rule: its anchor is written now. */
  | { kind: 'joined'; by: 'username' | 'email'; current: DamRecord }
  /** Nobody on the DAM is this row's: a new record. */
  | { kind: 'new' }
  /** Anything but one clear answer: the row fails, naming the records concerned. */
  | { kind: 'conflict'; reason: string; holders: DamRecord[] };

/** The key field and id field of an anchored resource. */
function fieldsOf(resource: ResourceName): { key: string; id: string } {
  return resource === 'users' ? { key: 'username', id: 'userId' } : { key: 'name', id: 'id' };
}

function folded(email: string): string {
  return email.trim().toLowerCase();
}

export class AnchorIndex {
  private readonly byAnchor = new Map<string, DamRecord[]>();
  private readonly byKey = new Map<string, DamRecord>();
  private readonly byEmail = new Map<string, DamRecord[]>();

  constructor(
    readonly resource: ResourceName,
    /** The substitutionMap key (users) or description tag (groups) anchors are kept under. */
    readonly anchorKey: string,
  ) {}

  /** An index of these DAM records. */
  static of(resource: ResourceName, records: Iterable<DamRecord>, anchorKey: string): AnchorIndex {
    const index = new AnchorIndex(resource, anchorKey);
    for (const record of records) index.add(record);
    return index;
  }

  /** Adds one DAM record. */
  add(record: DamRecord): void {
    const fields = fieldsOf(this.resource);
    const anchor = readAnchor(this.resource, record, this.anchorKey);
    if (anchor !== undefined) push(this.byAnchor, anchor, record);
    const key = record[fields.key];
    if (typeof key === 'string') this.byKey.set(key, record);
    const email = record.email;
    if (typeof email === 'string' && email.trim() !== '') push(this.byEmail, folded(email), record);
  }

  /** The DAM records holding this anchor (more than one is a conflict). */
  holders(anchor: string): readonly DamRecord[] {
    return this.byAnchor.get(anchor) ?? [];
  }

  /** The anchor a DAM record holds, or undefined. */
  anchorOf(record: DamRecord): string | undefined {
    return readAnchor(this.resource, record, this.anchorKey);
  }

  /** The DAM record with this key (username or group name). */
  recordWithKey(key: string): DamRecord | undefined {
    return this.byKey.get(key);
  }

  /** Who is the row's: by anchor first, then once by the join rule (see AnchorMatch). */
  match(candidate: AnchorCandidate, join: JoinRule): AnchorMatch {
    const found = this.find(candidate, join);
    if (found.kind === 'conflict') return found;
    // the row's key must be free, or be the matched record's own
    const holder = candidate.key === undefined ? undefined : this.byKey.get(candidate.key);
    const mine = found.kind === 'new' ? undefined : found.current;
    if (holder !== undefined && holder !== mine) {
      const what = found.kind === 'new' ? 'cannot be created' : `cannot take the name`;
      return {
        kind: 'conflict',
        reason: `${candidate.key} ${what}: it is held by ${this.describe(holder)}`,
        holders: mine === undefined ? [holder] : [mine, holder],
      };
    }
    return found;
  }

  private find(candidate: AnchorCandidate, join: JoinRule): AnchorMatch {
    const holders = this.holders(candidate.anchor);
    if (holders.length > 1) {
      return {
        kind: 'conflict',
        reason: `anchor ${candidate.anchor} is held by ${holders.length} records on the DAM: ${holders.map((one) => this.describe(one)).join(' and ')}; keep it on one`,
        holders: [...holders],
      };
    }
    if (holders.length === 1) return { kind: 'anchored', current: holders[0]! };
    if (join === 'none') return { kind: 'new' };
    if (join === 'username') {
      const current = candidate.key === undefined ? undefined : this.byKey.get(candidate.key);
      if (current === undefined || this.anchorOf(current) !== undefined) return { kind: 'new' };
      return { kind: 'joined', by: 'username', current };
    }
    const email = candidate.email === undefined ? '' : folded(candidate.email);
    if (email === '') return { kind: 'new' };
    const free = (this.byEmail.get(email) ?? []).filter((one) => this.anchorOf(one) === undefined);
    if (free.length > 1) {
      return {
        kind: 'conflict',
        reason: `joining by email ${email} matches ${free.length} records on the DAM without an anchor: ${free.map((one) => this.describe(one)).join(' and ')}`,
        holders: free,
      };
    }
    return free.length === 1 ? { kind: 'joined', by: 'email', current: free[0]! } : { kind: 'new' };
  }

  /** A DAM record as a message names it: key, id and anchor. */
  describe(record: DamRecord): string {
    const fields = fieldsOf(this.resource);
    const anchor = this.anchorOf(record);
    return `${String(record[fields.key])} (${fields.id} ${String(record[fields.id])}, ${anchor === undefined ? 'no anchor' : `anchor ${anchor}`})`;
  }
}

function push(map: Map<string, DamRecord[]>, key: string, record: DamRecord): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [record]);
  else list.push(record);
}

/**
 * Who holds `anchor` among `records` (a snapshot of DAM users or groups): `anchored` with the
 * record, `new` when nobody does, or a `conflict` naming every holder (never a guess).
 */
export function findByAnchor(
  resource: ResourceName,
  records: Iterable<DamRecord>,
  anchor: string,
  anchorKey: string,
): AnchorMatch {
  return AnchorIndex.of(resource, records, anchorKey).match({ anchor }, 'none');
}
