/**
 * Migration use cases shared by the CLI and the HTTP API: submit a bundle or a source target,
 * read a source target (the worker's step), save what was read as a bundle, describe, report.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { AdminError } from '../admin/errors.js';
import { writeFileAtomically, type WrittenFile } from '../export/atomic-file.js';
import { PorterError } from '../errors/porter-error.js';
import { readBundle } from '../migrate/bundle-reader.js';
import {
  STAGES,
  STAGE_SECTION,
  PLANNED_ID,
  type IdMapEntry,
  type MigrationInfo,
  type MigrationOptions,
} from '../migrate/migration-model.js';
import { MigrationStore, type MigrationStarter } from '../migrate/migration-store.js';
import { currentActor } from '../auth/acting.js';
import { runOnBehalfOf } from './worker-action.js';
import { readLiveSource } from '../migrate/read-source.js';
import { stagedBundle } from '../migrate/staged-bundle.js';
import { SourceStager } from '../migrate/stage-source.js';
import { sourceIdOf } from '../migrate/stage-records.js';
import type { StageRunnerDeps } from '../migrate/stage-runner.js';
import {
  enqueueMigration,
  enqueueMigrationRead,
  type MigrationFlowOptions,
} from '../queue/migration-queue.js';
import { formulaSafe } from '../results/formula-safe.js';
import { newImportId } from '../results/import-id.js';
import { writeCsvReport } from '../results/index.js';
import type { PorterContext } from './context.js';
import { startImport } from './imports.js';
import { bindTarget, isTargetRefusal, jobTarget } from '../targets/job-target.js';
import type { Target } from '../targets/targets.js';
import { PORTER_VERSION } from '../version.js';

/** The migration store of a context. */
export function migrationStore(context: PorterContext): MigrationStore {
  return new MigrationStore({
    redis: context.redis,
    prefix: context.env.PORTER_PREFIX,
    ttlSeconds: Math.round(context.env.PORTER_RESULT_TTL_DAYS * 24 * 3600),
  });
}

/**
 * What a stage runner needs, from a context. A stage's import is started by a worker on behalf
 * of the principal that started the migration: it records that principal (`startedBy`, so four
 * eyes knows whose plan it is), and writes its `import.start` audit events as that principal.
 */
export function stageRunnerDeps(context: PorterContext): StageRunnerDeps {
  const migrations = migrationStore(context);
  return {
    migrations,
    imports: context.store,
    startImport: async (request, onCreated, { migrationId, stage }) => {
      const starter = await migrations.starter(migrationId);
      const { options } = request;
      return runOnBehalfOf(
        context,
        starter.principal,
        'import.start',
        {
          migration: migrationId,
          stage,
          ...(starter.actionId ? { migrationActionId: starter.actionId } : {}),
          resource: options.resource,
          mode: options.mode,
          dryRun: options.dryRun,
          target: options.target,
        },
        () => startImport(context, request, onCreated),
      );
    },
    enqueuePrepare: (importId, target) => context.enqueuePrepare(importId, target),
  };
}

/** The principal acting now and its audit action, which a migration's stages act as. */
function currentStarter(): MigrationStarter {
  const actor = currentActor();
  return {
    ...(actor?.principal ? { principal: actor.principal } : {}),
    ...(actor?.actionId ? { actionId: actor.actionId } : {}),
  };
}

export interface StartMigrationRequest {
  source: AsyncIterable<Uint8Array | string>;
  fileName?: string;
  options: MigrationOptions;
}

/**
 * Reads a bundle into Redis, streamed (records are kept there, not in memory), then queues its
 * stages. A bundle that cannot be read ends the migration `failed` and throws
 * PORTER_INPUT_UNREADABLE; `onCreated` has the id before the bundle is read.
 */
export async function startMigration(
  context: PorterContext,
  request: StartMigrationRequest,
  onCreated?: (migrationId: string) => void,
): Promise<MigrationInfo> {
  const store = migrationStore(context);
  const options = bindMigrationTargets(context, request.options);
  const migrationId = newImportId().replace(/^imp_/, 'mig_');
  await store.create(migrationId, options, request.fileName, currentStarter());
  onCreated?.(migrationId);
  const stager = new SourceStager(store, migrationId);
  try {
    for await (const part of readBundle(request.source)) {
      if (part.kind === 'end') {
        await stager.done();
        await store.markReceived(migrationId, part.head, stager.totals);
        break;
      }
      await stager.add(part.resource, part.records);
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await store.setState(migrationId, 'failed', reason);
    throw error instanceof PorterError
      ? error
      : new PorterError('PORTER_UPLOAD_ABORTED', `the bundle broke off: ${reason}`, {
          cause: error,
        });
  }
  await enqueueMigration(flowOptions(context), migrationId);
  return requireMigration(context, migrationId);
}

function flowOptions(context: PorterContext): MigrationFlowOptions {
  return {
    connection: context.bullConnection,
    prefix: context.env.PORTER_PREFIX,
    jobTtlSeconds: Math.round(context.env.PORTER_RESULT_TTL_DAYS * 24 * 3600),
  };
}

/**
 * Binds a migration's targets when it is submitted: the target written to (refused when
 * read-only, unless a dry run) and, for a live migration, the source read from (known here).
 * Both travel with the migration, name and fingerprint; a source and target that are one
 * server are refused.
 */
function bindMigrationTargets(
  context: PorterContext,
  options: MigrationOptions,
  from?: string,
): MigrationOptions {
  const { target, ref } = bindTarget(context.targets, options, { writes: !options.dryRun });
  if (from === undefined) return { ...options, ...ref, from: undefined };
  const source = bindTarget(context.targets, { target: from }, { writes: false });
  if (source.target.name === target.name || source.target.summary.url === target.summary.url) {
    throw new PorterError(
      'PORTER_USAGE',
      `the source "${source.target.name}" and the target "${target.name}" are the same server (${target.summary.url}): name two instances`,
    );
  }
  return { ...options, ...ref, from: source.ref };
}

export interface StartLiveMigrationRequest {
  /** The source target's name. */
  from: string;
  /** `target`: the target written to (default `default`). */
  options: MigrationOptions;
}

/**
 * A migration from a live target: both targets are checked here (an unknown source is refused
 * with nothing created), then one job is queued whose worker reads the source (every group,
 * user and ACL, streamed) into Redis and queues the four stages. The migration is `receiving`
 * until the read is done.
 */
export async function startLiveMigration(
  context: PorterContext,
  request: StartLiveMigrationRequest,
): Promise<MigrationInfo> {
  const options = bindMigrationTargets(context, request.options, request.from);
  const store = migrationStore(context);
  const migrationId = newImportId().replace(/^imp_/, 'mig_');
  await store.create(migrationId, options, undefined, currentStarter());
  await enqueueMigrationRead(flowOptions(context), migrationId);
  return requireMigration(context, migrationId);
}

/**
 * The worker's `read` step of a live migration: reads its source target into Redis, then it is
 * `running`. A source or target this worker does not know, or configured otherwise than when
 * the migration was started, ends the migration `failed` with nothing read or written; so does
 * a read that still fails on `lastAttempt` (before that it throws, and the job is retried).
 * Returns whether the stages may run.
 */
export async function readMigrationSource(
  context: PorterContext,
  migrationId: string,
  run: { lastAttempt: boolean; signal?: AbortSignal },
): Promise<boolean> {
  const store = migrationStore(context);
  const meta = await store.meta(migrationId);
  if (!meta) return false;
  // read already (a worker that stopped before it queued the stages): the stages may run
  if (meta.state !== 'receiving') return meta.state === 'running';
  const options = await store.options(migrationId);
  const fail = async (reason: string): Promise<false> => {
    await store.setState(migrationId, 'failed', reason);
    context.logger.warn({ migrationId, reason }, 'migration source not read');
    return false;
  };
  if (options.from === undefined) return fail('the migration names no source target to read');
  let source: Target;
  try {
    jobTarget(context.targets, options);
    source = jobTarget(context.targets, options.from);
  } catch (error) {
    if (!isTargetRefusal(error)) throw error;
    return fail(`${error.message} [${error.code}]`);
  }
  const client = context.createAdminClient(4, source);
  const gate = context.gateOf(source);
  const maxDelayMs = context.retryPolicy.maxDelayMs;
  try {
    await readLiveSource(
      store,
      migrationId,
      { client, url: source.summary.url },
      {
        retry: context.retryPolicy,
        signal: run.signal,
        onRetry: async (error, delayMs, resource) => {
          context.logger.warn(
            { migrationId, resource, delayMs, err: error },
            'reading the migration source failed; trying again',
          );
          // one 429 makes every worker's calls to the source wait out its Retry-After
          if (error instanceof AdminError && error.status === 429) {
            await gate.pauseAll(Math.min(error.retryAfterMs ?? delayMs, maxDelayMs));
          }
        },
      },
    );
  } catch (error) {
    if (!run.lastAttempt || run.signal?.aborted) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    return fail(`the source target "${source.name}" could not be read: ${reason}`);
  } finally {
    await client.close();
  }
  return true;
}

/**
 * Writes what a live migration read from its source as a bundle file (atomically: whole or
 * not at all), once the read is done: the document `porter export --format bundle` writes,
 * which `porter migrate BUNDLE` and `porter diff` take. Returns its size and sha256.
 */
export async function saveMigrationBundle(
  context: PorterContext,
  migrationId: string,
  path: string,
): Promise<WrittenFile> {
  const store = migrationStore(context);
  const info = await requireMigration(context, migrationId);
  const meta = (await store.meta(migrationId)) ?? {};
  if (info.from === undefined || meta.exportedAt === undefined) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `migration ${migrationId} has not read a source target (${info.state}${info.reason ? `: ${info.reason}` : ''}); no bundle to save`,
    );
  }
  const head = {
    exportedAt: meta.exportedAt,
    source: meta.source ?? '',
    porterVersion: PORTER_VERSION,
  };
  return writeFileAtomically(
    dirname(resolve(path)),
    basename(path),
    stagedBundle(store, migrationId, head),
  );
}

/** The migration, or PORTER_NOT_FOUND. */
export async function requireMigration(
  context: PorterContext,
  migrationId: string,
): Promise<MigrationInfo> {
  const info = await migrationStore(context).get(migrationId, context.store);
  if (!info) {
    throw new PorterError(
      'PORTER_NOT_FOUND',
      `no migration ${migrationId} (results expire after ${context.env.PORTER_RESULT_TTL_DAYS} days)`,
    );
  }
  return info;
}

/** The id map in bundle order, section by section: one entry per source record that migrated. */
export async function* idMapEntries(
  context: PorterContext,
  migrationId: string,
): AsyncGenerator<IdMapEntry> {
  const store = migrationStore(context);
  for (const resource of ['groups', 'acls', 'users'] as const) {
    const total = await store.sourceCount(migrationId, resource);
    for (let start = 0; start < total; start += 1000) {
      const records = await store.readSource(migrationId, resource, start, 1000);
      const ids = records.map((record) => sourceIdOf(resource, record));
      const refs = await store.refs(migrationId, resource, ids);
      for (const sourceId of ids) {
        const ref = refs.get(sourceId);
        if (ref?.targetId === undefined) continue;
        yield { resource, sourceId, targetId: ref.targetId, key: ref.key ?? '' };
      }
    }
  }
}

function csvCell(value: string): string {
  const safe = formulaSafe(value);
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** Writes id-map.csv: resource, sourceId, targetId, key. */
export async function writeIdMap(
  context: PorterContext,
  migrationId: string,
  out: Writable,
): Promise<number> {
  let count = 0;
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  };
  await write('resource,sourceId,targetId,key\n');
  for await (const entry of idMapEntries(context, migrationId)) {
    // a dry run's record that would be created has no target id yet
    const targetId = entry.targetId === PLANNED_ID ? '(new)' : entry.targetId;
    const cells = [entry.resource, entry.sourceId, targetId, entry.key];
    await write(`${cells.map(csvCell).join(',')}\n`);
    count++;
  }
  return count;
}

/**
 * The report directory: one per-record CSV report per stage (`groups.csv`, `acls.csv`,
 * `users.csv`, `memberships.csv`, the stage imports' own reports) and `id-map.csv`.
 */
export async function writeMigrationReport(
  context: PorterContext,
  migrationId: string,
  dir: string,
): Promise<string[]> {
  const info = await requireMigration(context, migrationId);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const stage of info.stages) {
    if (!stage.importId) continue;
    const imported = await context.store.get(stage.importId);
    if (!imported) continue;
    const path = join(dir, `${stage.stage}.csv`);
    const out = createWriteStream(path);
    await writeCsvReport(context.store.results(stage.importId), out, {
      columns: imported.columns,
      inputFirst: false,
    });
    out.end();
    await finished(out);
    written.push(path);
  }
  const mapPath = join(dir, 'id-map.csv');
  const out = createWriteStream(mapPath);
  await writeIdMap(context, migrationId, out);
  out.end();
  await finished(out);
  written.push(mapPath);
  return written;
}

/** One line per stage: phase and counts, for `porter status`. */
export function describeStages(info: MigrationInfo): string[] {
  return info.stages.map((stage) => {
    const counts = stage.counts;
    const tally = counts
      ? Object.entries(counts)
          .filter(([, count]) => count > 0)
          .map(([status, count]) => `${count} ${status}`)
          .join(', ')
      : '';
    const actions = stage.actions
      ? Object.entries(stage.actions)
          .filter(([, count]) => (count ?? 0) > 0)
          .map(([action, count]) => `${count} ${action}`)
          .join(', ')
      : '';
    const section = STAGE_SECTION[stage.stage];
    const source = stage.stage === 'memberships' ? 'group member lists' : section;
    return (
      `${stage.stage.padEnd(12)} ${stage.phase.padEnd(8)} ${stage.done}/${stage.total} ${source}` +
      (tally ? `: ${tally}` : '') +
      (actions ? ` (${actions})` : '') +
      (stage.importId ? ` [${stage.importId}]` : '')
    );
  });
}

export { STAGES };
