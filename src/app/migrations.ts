/** Migration use cases shared by the CLI and the HTTP API: submit a bundle, describe, report. */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ResourceName } from '../admin/resources.js';
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
import { MigrationStore } from '../migrate/migration-store.js';
import { aclKeyText, sourceIdOf } from '../migrate/stage-records.js';
import type { StageRunnerDeps } from '../migrate/stage-runner.js';
import { enqueueMigration } from '../queue/migration-queue.js';
import { formulaSafe } from '../results/formula-safe.js';
import { newImportId } from '../results/import-id.js';
import { writeCsvReport } from '../results/index.js';
import type { PorterContext } from './context.js';
import { startImport } from './imports.js';
import { bindTarget } from '../targets/job-target.js';

/** The migration store of a context. */
export function migrationStore(context: PorterContext): MigrationStore {
  return new MigrationStore({
    redis: context.redis,
    prefix: context.env.PORTER_PREFIX,
    ttlSeconds: Math.round(context.env.PORTER_RESULT_TTL_DAYS * 24 * 3600),
  });
}

/** What a stage runner needs, from a context. */
export function stageRunnerDeps(context: PorterContext): StageRunnerDeps {
  return {
    migrations: migrationStore(context),
    imports: context.store,
    startImport: (request, onCreated) => startImport(context, request, onCreated),
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
  const writes = !request.options.dryRun;
  const { ref } = bindTarget(context.targets, request.options, { writes });
  const options: MigrationOptions = { ...request.options, ...ref };
  const migrationId = newImportId().replace(/^imp_/, 'mig_');
  await store.create(migrationId, options, request.fileName);
  onCreated?.(migrationId);
  const totals: Record<ResourceName, number> = { groups: 0, users: 0, acls: 0 };
  try {
    // records go to Redis about 1000 at a time, one write in flight while the next are read
    let pending: Promise<void> = Promise.resolve();
    let buffer: Record<string, unknown>[] = [];
    let buffered: ResourceName | undefined;
    const flush = async (): Promise<void> => {
      await pending;
      if (buffered === undefined || buffer.length === 0) return;
      pending = stageSection(store, migrationId, buffered, buffer);
      // a failed write surfaces at the next flush
      pending.catch(() => {});
      buffer = [];
    };
    for await (const part of readBundle(request.source)) {
      if (part.kind === 'end') {
        await flush();
        await pending;
        await store.markReceived(migrationId, part.head, totals);
        break;
      }
      if (part.resource !== buffered) await flush();
      buffered = part.resource;
      totals[part.resource] += part.records.length;
      buffer.push(...part.records);
      if (buffer.length >= STAGE_CHUNK) await flush();
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
  await enqueueMigration(
    {
      connection: context.bullConnection,
      prefix: context.env.PORTER_PREFIX,
      jobTtlSeconds: Math.round(context.env.PORTER_RESULT_TTL_DAYS * 24 * 3600),
    },
    migrationId,
  );
  return requireMigration(context, migrationId);
}

const STAGE_CHUNK = 1000;

/** Keeps records of a bundle section in Redis with their natural keys (ACLs: group and name). */
async function stageSection(
  store: MigrationStore,
  migrationId: string,
  resource: ResourceName,
  records: readonly Record<string, unknown>[],
): Promise<void> {
  let groupNames = new Map<string, string>();
  if (resource === 'acls') {
    const ids = [...new Set(records.map((record) => String(record.groupId)))];
    const refs = await store.refs(migrationId, 'groups', ids);
    groupNames = new Map(ids.map((id) => [id, refs.get(id)?.key ?? `#${id}`]));
  }
  await store.stageRecords(migrationId, resource, records, (record) => [
    sourceIdOf(resource, record),
    resource === 'users'
      ? String(record.username)
      : resource === 'groups'
        ? String(record.name)
        : aclKeyText(groupNames.get(String(record.groupId)) ?? '', String(record.name)),
  ]);
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
