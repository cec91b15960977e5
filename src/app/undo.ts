/**
 * `porter undo`: turns back what an ended import changed, as a new import (`undoOf`) with its own
 * report. Each record the import changed kept what undoing it needs (src/plan/undo-entry.ts);
 * the undo stages one record per entry and its batches plan them with src/plan/plan-undo.ts.
 */
import { PorterError } from '../errors/porter-error.js';
import type { ImportInfo, ImportMode, ImportOptions, StagedRecord } from '../model/import.js';
import type { ResourceName } from '../admin/resources.js';
import { decodeUndoEntry, type UndoEntry } from '../plan/undo-entry.js';
import { foldUndoEntries } from '../plan/undo-fold.js';
import { UndoLog } from '../results/undo-log.js';
import type { PorterContext } from './context.js';
import { endScimJournal, SCIM_SOURCE } from './scim-journal.js';
import { boundToTarget, requireImport, writerOf } from './imports.js';

export interface UndoRequest {
  /** Plan the undo only: every record gets its planned action, nothing is written. */
  dryRun?: boolean;
  /** Also turn back records changed on the server since the import (else PORTER_PLAN_STALE). */
  force?: boolean;
}

/** Modes an undo keeps from the import it undoes; any other (a sync) is shown as `upsert`. */
const UNDO_MODES: ReadonlySet<ImportMode> = new Set(['create', 'upsert', 'update', 'delete']);

/** Records staged per Redis call. */
const STAGE_CHUNK = 500;

/** The input column that names the record, per resource. */
const KEY_COLUMN: Record<ResourceName, string> = { users: 'username', groups: 'name', acls: 'acl' };

/** The undo's input columns: the record, its id in the import undone, what that import did, its row there. */
export function undoColumns(resource: ResourceName): string[] {
  return [KEY_COLUMN[resource], 'previousId', 'undoes', 'originalRow'];
}

/** The undo log of the process's imports. */
export function undoLogOf(context: PorterContext): UndoLog {
  return new UndoLog(context.redis, context.env.PORTER_PREFIX, context.store.ttlSeconds);
}

/**
 * The undo entries of an import, in row order. A SCIM journal may change one record several
 * times: its entries (an hour's changes of one provider, read whole) are folded into one per
 * record (src/plan/undo-fold.ts). A file import's are streamed as they are.
 */
export async function* undoEntriesOf(
  context: PorterContext,
  original: Pick<ImportInfo, 'id' | 'source' | 'options'>,
): AsyncGenerator<UndoEntry> {
  const { resource } = original.options;
  const entries = (async function* () {
    for await (const { row, text } of undoLogOf(context).entries(original.id))
      yield decodeUndoEntry(resource, row, text);
  })();
  if (original.source !== SCIM_SOURCE) {
    yield* entries;
    return;
  }
  const all: UndoEntry[] = [];
  for await (const entry of entries) all.push(entry);
  yield* foldUndoEntries(all);
}

/**
 * The import an undo of `importId` turns back (given an approved held sync: the import that wrote
 * its plan), after the refusals: still running, a dry run, a held sync, nothing changed.
 */
export async function undoableImport(
  context: PorterContext,
  importId: string,
): Promise<ImportInfo> {
  let original = await writerOf(context, await requireImport(context, importId));
  // a SCIM journal of this hour ends here: what it holds now is what is undone
  if (original.source === SCIM_SOURCE && !original.settled) {
    await endScimJournal(context, original);
    original = await requireImport(context, original.id);
  }
  if (!original.settled) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${importId} is still ${original.state}; undo it once it has ended (or cancel it first)`,
    );
  }
  if (original.options.dryRun) {
    throw new PorterError(
      'PORTER_CONFLICT',
      `import ${importId} is a dry run: it changed nothing, so there is nothing to undo`,
    );
  }
  if (await undoLogOf(context).isEmpty(original.id)) {
    throw new PorterError(
      'PORTER_INPUT_EMPTY',
      `import ${original.id} changed no record on the admin server; nothing to undo`,
    );
  }
  return original;
}

/**
 * Starts the undo of an ended import: a new import, linked by `undoOf`, of one record per record
 * the import changed; the import undone names it (`undoneBy`). Given an approved held sync, it
 * undoes the import that wrote its plan (`writtenBy`). Refused while the import runs, for a dry
 * run, for a held sync (approved by none: nothing written), and when it changed nothing.
 */
export async function undoImport(
  context: PorterContext,
  importId: string,
  request: UndoRequest = {},
  onCreated?: (info: ImportInfo) => void,
): Promise<ImportInfo> {
  const original = await undoableImport(context, importId);
  const { resource } = original.options;
  const { store } = context;
  const options: ImportOptions = {
    ...original.options,
    mode: UNDO_MODES.has(original.options.mode) ? original.options.mode : 'upsert',
    dryRun: request.dryRun === true,
    force: request.force === true,
    // each record is read by its id just before it is turned back
    lookup: 'each',
  };
  // an undo is planned from its entries alone: how the import read its file and chose its
  // records (mapping, failure limit, a sync's rules) does not apply, and must not run again
  for (const field of ['mapping', 'maxFailures', 'sync', 'stream']) {
    delete (options as unknown as Record<string, unknown>)[field];
  }
  const info = await store.create({
    options: boundToTarget(context, options),
    source: `undo of ${original.id}`,
    undoOf: original.id,
    columns: undoColumns(resource),
  });
  // the import undone names its undo (a dry run of an undo turns nothing back)
  if (!options.dryRun) await store.setLinks(original.id, { undoneBy: info.id });
  onCreated?.(info);
  let staged = 0;
  let buffer: StagedRecord[] = [];
  const flush = async (): Promise<void> => {
    if (buffer.length > 0) await store.stage(info.id, buffer);
    buffer = [];
  };
  try {
    for await (const entry of undoEntriesOf(context, original)) {
      staged++;
      buffer.push({
        row: staged,
        input: {
          [KEY_COLUMN[resource]]: entry.key,
          previousId: String(entry.id),
          undoes: entry.action,
          originalRow: String(entry.row),
        },
        record: { undo: entry },
      });
      if (buffer.length >= STAGE_CHUNK) await flush();
    }
    await flush();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await store.transition(info.id, ['receiving'], 'failed', reason);
    throw error;
  }
  const batches = Math.ceil(staged / info.options.batchSize);
  const received = await store.markReceived(info.id, { total: staged, batches });
  if (batches > 0) await context.enqueuePrepare(info.id, info.options.target);
  return received;
}
