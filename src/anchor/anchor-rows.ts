/**
 * An upload's rows matched to the DAM by anchor, as they are received (the producer): each
 * record gets its anchor written where the DAM keeps it, and what it was matched to travels with
 * it to planning, which checks it again against the DAM before the write. A row that cannot be
 * matched without a guess fails; a leaver who holds no account is skipped (unless
 * `createInactive`). The DAM's records are read once, before the first row, into memory, as
 * `$unique` reads them.
 */
import type { ResourceName } from '../admin/resources.js';
import type { AnchorSettings } from './anchor-settings.js';
import { anchorProblem, writeAnchor } from './anchor-field.js';
import { AnchorIndex } from './anchor-index.js';

/** What the producer found for a record's anchor; planning checks it again (plan-anchor.ts). */
export interface StagedAnchor {
  /** The record's anchor. */
  value: string;
  /** The DAM record holding the anchor, one without an anchor joined now, or nobody. */
  match: 'anchored' | 'joined' | 'new';
  /** The matched DAM record's key (username, group name) as it was read. */
  key?: string;
  /** The matched DAM record's id. */
  id?: number;
}

/** A row's outcome: matched (its record changed in place), failed, or skipped. */
export type AnchorOutcome =
  | { kind: 'matched'; anchor: StagedAnchor }
  | {
      kind: 'failed';
      error: string;
      /** The keys of the DAM records the row's anchor met, in a conflict. */
      holders?: string[];
    }
  | { kind: 'skipped'; reason: string };

export class AnchorRows {
  readonly index: AnchorIndex;
  /** Anchor → the rows that carry it, for anchors carried by more than one row. */
  readonly twice = new Map<string, number[]>();
  private readonly firstRow = new Map<string, number>();

  constructor(
    readonly resource: ResourceName,
    readonly settings: AnchorSettings,
  ) {
    this.index = new AnchorIndex(resource, settings.key);
  }

  /** Matches one row's record (changed in place: its anchor is written into it). */
  match(row: number, record: Record<string, unknown>, anchor: string | undefined): AnchorOutcome {
    if (anchor === undefined) {
      return { kind: 'failed', error: 'the anchor expression gave no value for this row' };
    }
    const problem = anchorProblem(this.resource, anchor);
    if (problem !== undefined) return { kind: 'failed', error: problem };
    const earlier = this.firstRow.get(anchor);
    if (earlier !== undefined) {
      const rows = this.twice.get(anchor) ?? [earlier];
      rows.push(row);
      this.twice.set(anchor, rows);
      return {
        kind: 'failed',
        error: `anchor ${anchor} is carried by rows ${rows.join(' and ')}: each of them fails; keep one row per person`,
      };
    }
    this.firstRow.set(anchor, row);
    const keyField = this.resource === 'users' ? 'username' : 'name';
    const key = typeof record[keyField] === 'string' ? (record[keyField] as string) : undefined;
    const email = typeof record.email === 'string' ? record.email : undefined;
    const found = this.index.match({ anchor, key, email }, this.settings.join);
    if (found.kind === 'conflict') {
      const holders = found.holders.flatMap((holder) =>
        typeof holder[keyField] === 'string' ? [holder[keyField] as string] : [],
      );
      return { kind: 'failed', error: found.reason, holders };
    }
    if (found.kind === 'new') {
      const status = record.status;
      if (
        this.resource === 'users' &&
        !this.settings.createInactive &&
        typeof status === 'string' &&
        status !== '' &&
        status !== 'Active'
      ) {
        return {
          kind: 'skipped',
          reason: `skipped: status ${status} and no account on the DAM holds anchor ${anchor}; not created (the mapping's createInactive: true creates it)`,
        };
      }
      writeAnchor(this.resource, record, anchor, this.settings.key);
      return { kind: 'matched', anchor: { value: anchor, match: 'new' } };
    }
    const current = found.current;
    writeAnchor(this.resource, record, anchor, this.settings.key, current);
    const idField = this.resource === 'users' ? 'userId' : 'id';
    return {
      kind: 'matched',
      anchor: {
        value: anchor,
        match: found.kind,
        key: String(current[keyField]),
        id: Number(current[idField]),
      },
    };
  }
}
