/** What planning a batch needs to know: the resource, the mode, the reads, and a sync's rules. */
import type { ResourceName } from '../admin/resources.js';
import type { ImportMode } from '../model/import.js';
import type { SyncRules } from '../sync/sync-rules.js';
import type { DirectoryView } from './directory-view.js';
import type { AnchorPlanContext } from './plan-anchor.js';

export interface PlanContext {
  resource: ResourceName;
  mode: ImportMode;
  allowAdmin: boolean;
  /** Create keys that look like an existing key (see lookalikeOf). @defaultValue false */
  allowLookalike?: boolean;
  lookup: DirectoryView;
  /** Reads in flight at once. @defaultValue 8 */
  concurrency?: number;
  /**
   * Rows an earlier run of this batch handed to the server (the send journal): a create found
   * now, or a delete's record gone now, is that run's work, not someone else's.
   */
  sentBefore?: ReadonlySet<number>;
  /**
   * A plan to show (dry run) or to apply: every record gets the fingerprint of the record it is
   * planned against; a dry run also names the ids its list changes add and remove.
   */
  planning?: 'dry-run' | 'apply';
  /** A sync: what it may touch, and the mapping's columns (a status column keeps a lock). */
  sync?: SyncPlanContext;
  /** The mapping's anchor: records matched by it are checked again and their writes named. */
  anchor?: AnchorPlanContext;
}

export interface SyncPlanContext {
  rules: SyncRules;
  /** The mapping's column → field, to tell whether the file carries a status column. */
  mappingColumns?: Record<string, string>;
}
