/**
 * What `porter undo` will write, said before it starts: per action, what the undo does to each
 * record the import changed (a create is deleted, a delete re-created, an update restored; an
 * update whose value before was `status: Locked` locks again), deletes and locks first. Counted
 * from the import's undo entries; the undo itself reads each record again before it writes.
 */
import type { RecordResult } from '../model/import.js';
import type { UndoEntry } from '../plan/undo-entry.js';
import { LOCKED } from '../sync/sync-rules.js';
import type { PorterContext } from './context.js';
import { PREVIEW_REMOVALS, REMOVAL_ACTIONS, WRITE_ACTIONS } from './plan-approval.js';
import { undoableImport, undoEntriesOf } from './undo.js';
import { targetShown, type WritePreview } from './write-preview.js';

type WriteAction = (typeof WRITE_ACTIONS)[number];

export interface UndoPreview extends WritePreview {
  command: 'undo';
  /** Records the undo writes, per action, removals first; actions with none left out. */
  writes: Array<{ action: WriteAction; records: number }>;
}

/** What the undo of one entry writes. */
export function undoAction(entry: UndoEntry): WriteAction {
  if (entry.action === 'create') return 'delete';
  if (entry.action === 'delete') return 'create';
  return entry.before?.status === LOCKED ? 'lock' : 'update';
}

/**
 * The counts and first removals of the undo of `importId` (given an approved held sync: of the
 * import that wrote its plan), after the refusals an undo makes.
 */
export async function previewUndo(
  context: PorterContext,
  importId: string,
  limit = PREVIEW_REMOVALS,
): Promise<UndoPreview> {
  const original = await undoableImport(context, importId);
  const counts = new Map<WriteAction, number>();
  const firstRemovals: RecordResult[] = [];
  for await (const entry of undoEntriesOf(context, original)) {
    const { row } = entry;
    const action = undoAction(entry);
    counts.set(action, (counts.get(action) ?? 0) + 1);
    if (REMOVAL_ACTIONS.includes(action) && firstRemovals.length < limit) {
      firstRemovals.push({ row, input: {}, key: entry.key, action, status: 'planned' });
    }
  }
  const writes = WRITE_ACTIONS.map((action) => ({
    action,
    records: counts.get(action) ?? 0,
  })).filter((write) => write.records > 0);
  return {
    id: original.id,
    command: 'undo',
    writes,
    confirm: writes.map((write) => `${write.action} ${write.records}`).join(', '),
    removals: writes
      .filter((write) => REMOVAL_ACTIONS.includes(write.action))
      .reduce((sum, write) => sum + write.records, 0),
    firstRemovals,
    target: targetShown(context, original.options.target),
  };
}
