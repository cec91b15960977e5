/**
 * Journal entries: one NDJSON line per committed write, `{"seq":N,"changes":[...]}`, each change
 * one call of a store write method (`putUser` with its `groups`, `deleteUser`, `putGroup` with
 * its `users`, `deleteGroup`, `putAcl`). Replaying the calls in order rebuilds the state.
 *
 * Reading tolerates one thing only: a last line that is not a whole entry or lacks its
 * newline, which is what a crash in the middle of an append leaves. It is cut off with a
 * warning. Anything unreadable before the end stops start-up, naming the line.
 */
import { truncate } from 'node:fs/promises';
import type { Logger } from '../util/logger.js';
import { groupText, readAcl, readGroup, readId, readUser, userText } from './file-records.js';
import { readFileLines, type FileLine } from './line-reader.js';
import { fileError } from './snapshot-file.js';
import type { SandboxStore, StoreChange } from './store.js';

/** One change as a journal entry holds it. */
export function changeText(change: StoreChange): string {
  switch (change.kind) {
    case 'putUser':
      return `{"putUser":${userText(change.user, change.groupIds)}}`;
    case 'deleteUser':
      return `{"deleteUser":${change.userId}}`;
    case 'putGroup':
      return `{"putGroup":${groupText(change.group, change.userIds)}}`;
    case 'deleteGroup':
      return `{"deleteGroup":${change.id}}`;
    case 'putAcl':
      return `{"putAcl":${JSON.stringify(change.acl)}}`;
  }
}

/** The journal line of entry `seq` holding `changes` (each from changeText). */
export function entryText(seq: number, changes: readonly string[]): string {
  return `{"seq":${seq},"changes":[${changes.join(',')}]}\n`;
}

/** What replaying one journal file found. */
export interface ReplayResult {
  /** The last entry seen (applied or already in the snapshot); `afterSeq` when none. */
  lastSeq: number;
  /** The first entry in the file; undefined when it holds none. */
  firstSeq: number | undefined;
  /** Size of the file's whole entries: the torn tail, if any, starts here. */
  bytes: number;
  /** Whether a torn last line was found (and, with `cutTornTail`, cut off). */
  torn: boolean;
}

/**
 * Applies the entries of `file` after `afterSeq` to the store. Entries must come in increasing
 * order; those up to `afterSeq` are already in the snapshot and skipped.
 */
export async function replayJournal(
  file: string,
  store: SandboxStore,
  afterSeq: number,
  options: { logger: Logger; cutTornTail: boolean },
): Promise<ReplayResult> {
  let lastSeq = afterSeq;
  let firstSeq: number | undefined;
  let bytes = 0;
  /** A line that could not be read: fatal unless it turns out to be the last one. */
  let broken: { line: FileLine; error: unknown } | undefined;
  for await (const lines of readFileLines(file)) {
    for (const line of lines) {
      if (line.text.trim() === '') {
        if (!broken) bytes = line.end;
        continue;
      }
      if (broken) throw fileError(file, broken.line.number, broken.error);
      let entry: { seq: number; changes: unknown[] };
      try {
        // An entry is written with its newline in one append: without it, the append never finished.
        if (!line.terminated) throw new Error('entry without its closing newline');
        entry = readEntry(line.text);
      } catch (error) {
        broken = { line, error };
        continue;
      }
      firstSeq ??= entry.seq;
      if (entry.seq > afterSeq) {
        if (entry.seq <= lastSeq) {
          throw fileError(
            file,
            line.number,
            new Error(`entry ${entry.seq} after entry ${lastSeq}`),
          );
        }
        try {
          for (const change of entry.changes) replayChange(store, change);
        } catch (error) {
          throw fileError(file, line.number, error);
        }
      }
      lastSeq = Math.max(lastSeq, entry.seq);
      bytes = line.end;
    }
  }
  if (broken) {
    options.logger.warn(
      { file, line: broken.line.number, bytes: broken.line.end - bytes },
      'sandbox journal ends in a torn entry (a crash during a write); it is ignored',
    );
    if (options.cutTornTail) await truncate(file, bytes);
  }
  return { lastSeq, firstSeq, bytes, torn: broken !== undefined };
}

function readEntry(text: string): { seq: number; changes: unknown[] } {
  const entry = JSON.parse(text) as { seq?: unknown; changes?: unknown };
  const seq = entry?.seq;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) {
    throw new Error('journal entry without a whole positive "seq"');
  }
  if (!Array.isArray(entry.changes)) throw new Error('journal entry without a "changes" array');
  return { seq, changes: entry.changes };
}

/** Makes the store call one change records. */
function replayChange(store: SandboxStore, value: unknown): void {
  const change = (value ?? {}) as Record<string, unknown>;
  if ('putUser' in change) {
    const { user, groups } = readUser(change.putUser, store);
    store.putUser(user, groups);
  } else if ('deleteUser' in change) {
    store.deleteUser(readId(change.deleteUser, 'deleteUser'));
  } else if ('putGroup' in change) {
    const { group, users } = readGroup(change.putGroup, store);
    store.putGroup(group, users);
  } else if ('deleteGroup' in change) {
    store.deleteGroup(readId(change.deleteGroup, 'deleteGroup'));
  } else if ('putAcl' in change) {
    const acl = readAcl(change.putAcl, store);
    if (acl) store.putAcl(acl);
  } else {
    throw new Error('expected a putUser, deleteUser, putGroup, deleteGroup or putAcl change');
  }
}
