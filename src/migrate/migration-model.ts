/** The vocabulary of a migration: a bundle loaded into another instance, stage by stage. */
import type { ResourceName } from '../admin/resources.js';
import type { ImportState, RecordAction, ResultStatus } from '../model/import.js';
import type { JobTargetRef } from '../targets/job-target.js';

/**
 * The stages in dependency order: groups, then ACLs (they name a group), then users, then the
 * group memberships (they name groups and users). Each stage is one ordinary import.
 */
export type StageName = 'groups' | 'acls' | 'users' | 'memberships';
export const STAGES: readonly StageName[] = ['groups', 'acls', 'users', 'memberships'];

/** The bundle section each stage reads: memberships are the groups' `users` lists. */
export const STAGE_SECTION: { readonly [S in StageName]: ResourceName } = {
  groups: 'groups',
  acls: 'acls',
  users: 'users',
  memberships: 'groups',
};

export type MigrationMode = 'create' | 'upsert';
export const MIGRATION_MODES: readonly MigrationMode[] = ['create', 'upsert'];

/** `receiving`: the bundle is read, or the source target (`from`) is read by a worker. */
export type MigrationState =
  'receiving' | 'running' | 'completed' | 'completed_with_errors' | 'failed';

export const FINAL_MIGRATION_STATES: ReadonlySet<MigrationState> = new Set([
  'completed',
  'completed_with_errors',
  'failed',
]);

export interface MigrationOptions {
  /** The target written to, and its fingerprint when the migration was started. */
  target?: string;
  targetFingerprint?: string;
  /** Where the target pointed then, credentials left out. */
  targetUrl?: string;
  /**
   * A migration from a live target rather than a bundle: the source target's name, and its
   * fingerprint when the migration was started. A worker reads it (the migration's `read`
   * step) into the same Redis sections a bundle fills.
   */
  from?: JobTargetRef;
  /** `create`: a record already on the target fails ALREADY_EXISTS; `upsert`: it is updated. */
  mode: MigrationMode;
  dryRun: boolean;
  /** Administrators may be created or kept (the import's --allow-admin). */
  allowAdmin: boolean;
  batchSize: number;
}

/** `pending`: not started; `running`: its import runs; `done`: settled, its ids are mapped. */
export type StagePhase = 'pending' | 'running' | 'done';

export interface StageInfo {
  stage: StageName;
  phase: StagePhase;
  /** The stage's import, once started. */
  importId?: string;
  importState?: ImportState;
  total: number;
  done: number;
  counts?: Record<ResultStatus, number>;
  actions?: Partial<Record<RecordAction, number>>;
}

export interface MigrationInfo {
  id: string;
  state: MigrationState;
  reason?: string;
  options: MigrationOptions;
  /** The target read from (a migration from a live target); a bundle's migration has none. */
  from?: string;
  /** The target written to. */
  to: string;
  /** The bundle's file name (none when read live), and where and when it was read. */
  bundle: { name?: string; source?: string; exportedAt?: string };
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  /** The principal that started it; its stage imports are started as that principal. */
  startedBy?: string;
  /** The audit action that started it. */
  actionId?: string;
  /** Records per bundle section. */
  totals: Record<ResourceName, number>;
  /** The stage running now (or the last one). */
  stage?: StageName;
  stages: StageInfo[];
}

/** One line of id-map.csv. */
export interface IdMapEntry {
  resource: ResourceName;
  sourceId: string;
  targetId: string;
  key: string;
}

/** A target id not known yet: a dry run's record that would be created. */
export const PLANNED_ID = '+';
