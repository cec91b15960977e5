/**
 * One stage of a migration: start its import from the bundle's records (references rewritten
 * through the id map), and once that import has settled, record where each source id went.
 * Both steps can run again after a crash and do the same thing: a stage import that was
 * received whole is never submitted twice, and the id map is written with the same values.
 */
import { Readable } from 'node:stream';
import type { IngestItem } from '../ingest/index.js';
import type { ImportInfo, ImportOptions, RecordResult } from '../model/import.js';
import { naturalKey } from '../plan/natural-key.js';
import type { ImportStore } from '../results/import-store.js';
import { mapConcurrent } from '../util/concurrency.js';
import type { SubmitImportRequest } from '../imports/submit-import.js';
import {
  PLANNED_ID,
  STAGE_SECTION,
  STAGES,
  type MigrationState,
  type StageName,
} from './migration-model.js';
import type { MigrationStore, SourceRef } from './migration-store.js';
import {
  PLANNED_MARK,
  REFERENCE_FAILED_MARK,
  referencesOf,
  sourceIdOf,
  stageLine,
  type SourceReference,
} from './stage-records.js';

export interface StageRunnerDeps {
  migrations: MigrationStore;
  imports: ImportStore;
  /**
   * Starts an ordinary import (src/app/imports.ts startImport) for the stage, as the principal
   * that started the migration.
   */
  startImport: (
    request: SubmitImportRequest,
    onCreated: (info: ImportInfo) => void,
    stage: { migrationId: string; stage: StageName },
  ) => Promise<ImportInfo>;
  /** Queues an import's preparation again; a no-op while its job exists (import-queue.ts). */
  enqueuePrepare: (importId: string, target?: string) => Promise<void>;
}

/** Source records read per Redis round trip. */
const CHUNK = 1000;

/** The result of a line the migration decided itself, or undefined to send it. */
export function decideLine(
  resource: ImportOptions['resource'],
  item: Extract<IngestItem, { kind: 'record' }>,
): RecordResult | undefined {
  const failed = item.input[REFERENCE_FAILED_MARK];
  const planned = item.input[PLANNED_MARK];
  if (typeof failed !== 'string' && typeof planned !== 'string') return undefined;
  const base = {
    row: item.row,
    line: item.line,
    key: naturalKey(resource, item.record),
    attempts: 0,
    input: item.input,
  };
  if (typeof failed === 'string') {
    return { ...base, status: 'failed', errorCode: 'PORTER_REFERENCE_FAILED', error: failed };
  }
  return { ...base, status: 'planned', action: planned as RecordResult['action'] };
}

/** The stage's import lines, read from Redis a chunk at a time. */
async function* stageLines(
  deps: StageRunnerDeps,
  migrationId: string,
  stage: StageName,
): AsyncGenerator<string> {
  const section = STAGE_SECTION[stage];
  const total = await deps.migrations.sourceCount(migrationId, section);
  // the next chunk is read from Redis while the import parses this one
  let next = total > 0 ? chunkLines(deps, migrationId, stage, 0) : undefined;
  for (let start = 0; next !== undefined; start += CHUNK) {
    const text = await next;
    next = start + CHUNK < total ? chunkLines(deps, migrationId, stage, start + CHUNK) : undefined;
    // a prefetch that fails surfaces when it is awaited
    next?.catch(() => {});
    yield text;
  }
}

/** The import lines of one chunk of the stage's records, references rewritten. */
async function chunkLines(
  deps: StageRunnerDeps,
  migrationId: string,
  stage: StageName,
  start: number,
): Promise<string> {
  const records = await deps.migrations.readSource(migrationId, STAGE_SECTION[stage], start, CHUNK);
  const wanted: Record<'groups' | 'users', Set<string>> = { groups: new Set(), users: new Set() };
  for (const record of records) {
    for (const reference of referencesOf(stage, record)) {
      wanted[reference.resource].add(reference.sourceId);
    }
  }
  const [groups, users] = await Promise.all([
    deps.migrations.refs(migrationId, 'groups', [...wanted.groups]),
    deps.migrations.refs(migrationId, 'users', [...wanted.users]),
  ]);
  const lookup = (reference: SourceReference): SourceRef | undefined =>
    (reference.resource === 'groups' ? groups : users).get(reference.sourceId);
  let text = '';
  for (const record of records) text += `${JSON.stringify(stageLine(stage, record, lookup))}\n`;
  return text;
}

/**
 * Starts the stage's import unless it was started already; returns its id, or undefined when
 * the stage has nothing to do (its section is empty).
 */
export async function startStage(
  deps: StageRunnerDeps,
  migrationId: string,
  stage: StageName,
): Promise<string | undefined> {
  const { migrations, imports } = deps;
  const known = await migrations.stageOf(migrationId, stage);
  if (known.importId) {
    const info = await imports.get(known.importId);
    // received whole: it runs (or ran) on its own; only one cut while received starts again
    if (info && info.state !== 'receiving') {
      // a worker stopped between the upload recorded whole and its preparation queued: the
      // import would wait for a preparation that never comes. Queued again until it has run
      // (its lookup recorded), a no-op while the job waits or runs; a preparation run twice
      // queues the same batches under the same ids
      if (info.state === 'queued' && info.lookup === undefined) {
        await deps.enqueuePrepare(known.importId, info.options.target);
      }
      return known.importId;
    }
    if (info) {
      await imports.transition(
        known.importId,
        ['receiving'],
        'failed',
        'abandoned: the migration worker stopped while the stage was received; started again',
      );
    }
  }
  const section = STAGE_SECTION[stage];
  if ((await migrations.sourceCount(migrationId, section)) === 0) {
    await migrations.setStage(migrationId, stage, { phase: 'done' });
    return undefined;
  }
  const options = await migrations.options(migrationId);
  let recorded: Promise<void> = Promise.resolve();
  const resource = section;
  const info = await deps.startImport(
    {
      options: {
        target: options.target,
        targetFingerprint: options.targetFingerprint,
        targetUrl: options.targetUrl,
        resource,
        mode: stage === 'memberships' ? 'update' : options.mode,
        batchSize: options.batchSize,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: options.allowAdmin,
        // the source instance holds these keys side by side already
        allowLookalike: true,
        dryRun: options.dryRun,
      },
      source: Readable.from(stageLines(deps, migrationId, stage)),
      fileName: `${migrationId}-${stage}.ndjson`,
      format: 'ndjson',
      decide: (item) => decideLine(resource, item),
    },
    (created) => {
      recorded = migrations.setStage(migrationId, stage, {
        phase: 'running',
        importId: created.id,
      });
    },
    { migrationId, stage },
  );
  await recorded;
  return info.id;
}

/**
 * Once the stage's import has settled, records each source id's target id (or why it did not
 * migrate) and marks the stage done; false while the import still runs.
 */
export async function settleStage(
  deps: StageRunnerDeps,
  migrationId: string,
  stage: StageName,
): Promise<boolean> {
  const { migrations, imports } = deps;
  const known = await migrations.stageOf(migrationId, stage);
  if (known.phase === 'done') return true;
  const importId = known.importId;
  if (!importId) return false;
  const info = await imports.get(importId);
  if (!info?.settled) return false;
  if (stage !== 'memberships') {
    const section = STAGE_SECTION[stage];
    const total = await migrations.sourceCount(migrationId, section);
    const starts = Array.from({ length: Math.ceil(total / CHUNK) }, (_, index) => index * CHUNK);
    // chunks are independent: a few at once, so the next stage starts sooner
    await mapConcurrent(starts, 4, async (start) => {
      const records = await migrations.readSource(migrationId, section, start, CHUNK);
      const rows = records.map((_, index) => start + index + 1);
      const results = await imports.resultsOf(importId, rows);
      const mapped: [string, string][] = [];
      const failed: [string, string][] = [];
      records.forEach((record, index) => {
        const sourceId = sourceIdOf(section, record);
        const result = results.get(rows[index]!);
        if (result?.status === 'succeeded' && result.id !== undefined) {
          mapped.push([sourceId, String(result.id)]);
        } else if (result?.status === 'planned') {
          mapped.push([sourceId, result.id === undefined ? PLANNED_ID : String(result.id)]);
        } else {
          const why = result
            ? `${result.status}${result.errorCode ? ` ${result.errorCode}` : ''}`
            : 'no result';
          failed.push([sourceId, why]);
        }
      });
      await migrations.recordOutcomes(migrationId, section, mapped, failed);
    });
  }
  await migrations.setStage(migrationId, stage, { phase: 'done' });
  return true;
}

/** After the last stage: the migration's final state from its stages' counts. */
export async function finishMigration(
  deps: StageRunnerDeps,
  migrationId: string,
): Promise<MigrationState> {
  const info = await deps.migrations.get(migrationId, deps.imports);
  if (!info) return 'failed';
  const unfinished = info.stages.filter((stage) => stage.phase !== 'done');
  let state: MigrationState = 'completed';
  let reason: string | undefined;
  if (unfinished.length > 0) {
    state = 'failed';
    reason = `stage ${unfinished.map((stage) => stage.stage).join(', ')} did not finish`;
  } else if (
    info.stages.some((stage) => (stage.counts?.failed ?? 0) + (stage.counts?.unprocessed ?? 0) > 0)
  ) {
    state = 'completed_with_errors';
  }
  await deps.migrations.setState(migrationId, state, reason);
  return state;
}

export { STAGES };
