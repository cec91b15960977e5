/**
 * The snapshot: the whole state in the data file itself, NDJSON, a header line then one line
 * per group, user (with its `groups`), group with members (its `users`, restoring the order
 * the group lists them in) and ACL. Written to a temp file beside it, flushed to
 * disk and renamed over it, so a crash leaves the old or the new snapshot, never a torn one.
 * Both directions stream: no step holds the file as one string.
 *
 * Version 1 (before the journal) has no `journalSeq` and loads as a snapshot that no journal
 * entry is folded into yet; version 2 names the last journal entry it holds.
 */
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PorterError } from '../errors/porter-error.js';
import { groupText, readAcl, readGroup, readMembers, readUser, userText } from './file-records.js';
import { readFileLines } from './line-reader.js';
import type { SandboxStore, StoreSnapshot } from './store.js';

const FORMAT = 'porter-sandbox';
const FORMAT_VERSION = 2;
const READABLE_VERSIONS: readonly unknown[] = [1, 2];
const WRITE_CHUNK_CHARS = 1024 * 1024;

/** What a loaded snapshot says about itself. */
export interface SnapshotInfo {
  /** The last journal entry the snapshot holds; 0 for none. */
  journalSeq: number;
  /** Size of the file, the yardstick for when the journal is worth folding in. */
  bytes: number;
}

/** Writes `snapshot` (holding journal entries up to `journalSeq`) over `file`; returns its size. */
export async function writeSnapshot(
  file: string,
  snapshot: StoreSnapshot,
  journalSeq: number,
): Promise<number> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w');
  let bytes = 0;
  try {
    let buffer =
      JSON.stringify({
        format: FORMAT,
        version: FORMAT_VERSION,
        nextUserId: snapshot.nextUserId,
        nextGroupId: snapshot.nextGroupId,
        journalSeq,
      }) + '\n';
    const lines = function* (): Generator<string> {
      for (const group of snapshot.groups) yield `{"group":${groupText(group, undefined)}}`;
      for (const user of snapshot.users) {
        yield `{"user":${userText(user, snapshot.groupsOf(user.userId))}}`;
      }
      for (const [id, users] of snapshot.members) {
        yield `{"members":{"id":${id},"users":${JSON.stringify(users)}}}`;
      }
      for (const acl of snapshot.acls) yield `{"acl":${JSON.stringify(acl)}}`;
    };
    for (const line of lines()) {
      buffer += line + '\n';
      if (buffer.length >= WRITE_CHUNK_CHARS) {
        bytes += (await handle.write(buffer)).bytesWritten;
        buffer = '';
      }
    }
    bytes += (await handle.write(buffer)).bytesWritten;
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temp, file);
  await syncDirectory(dirname(file));
  return bytes;
}

/** Reads the snapshot in `file` into the empty store. */
export async function loadSnapshot(file: string, store: SandboxStore): Promise<SnapshotInfo> {
  let header: { nextUserId: number; nextGroupId: number; journalSeq: number } | undefined;
  let bytes = 0;
  for await (const lines of readFileLines(file)) {
    for (const line of lines) {
      bytes = line.end;
      if (line.text.trim() === '') continue;
      try {
        const entry = JSON.parse(line.text) as Record<string, unknown>;
        if (!header) {
          header = readHeader(entry);
          continue;
        }
        // Groups come first in the file, so memberships and ACLs resolve as they are read.
        if ('group' in entry) {
          const { group, users } = readGroup(entry.group, store);
          store.putGroup(group, users);
        } else if ('user' in entry) {
          const { user, groups } = readUser(entry.user, store);
          store.putUser(user, groups ?? []);
        } else if ('members' in entry) {
          // Same memberships as the users said, in the group's order: only the order changes.
          const { id, users } = readMembers(entry.members, store);
          const group = store.getGroup(id);
          if (group) store.putGroup(group, users);
        } else if ('acl' in entry) {
          const acl = readAcl(entry.acl, store);
          if (acl) store.putAcl(acl);
        } else {
          throw new Error('expected a "group", "user", "members" or "acl" entry');
        }
      } catch (error) {
        throw fileError(file, line.number, error);
      }
    }
  }
  if (header) store.raiseIdCounters(header.nextUserId, header.nextGroupId);
  return { journalSeq: header?.journalSeq ?? 0, bytes };
}

/** A line of a data file or journal that cannot be read: start-up stops naming it. */
export function fileError(file: string, lineNumber: number, error: unknown): PorterError {
  return new PorterError(
    'PORTER_CONFIG_INVALID',
    `sandbox data file ${file}, line ${lineNumber}: ${(error as Error).message}`,
    { cause: error, details: { line: lineNumber } },
  );
}

/** Makes a rename or a new file in `directory` durable (a no-op where directories cannot be synced). */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL') throw error;
  } finally {
    await handle?.close();
  }
}

function readHeader(entry: Record<string, unknown>): {
  nextUserId: number;
  nextGroupId: number;
  journalSeq: number;
} {
  if (entry.format !== FORMAT || !READABLE_VERSIONS.includes(entry.version)) {
    throw new Error(`not a ${FORMAT} file of version ${READABLE_VERSIONS.join(' or ')}`);
  }
  return {
    nextUserId: Number(entry.nextUserId) || 1,
    nextGroupId: Number(entry.nextGroupId) || 1,
    journalSeq: Number(entry.journalSeq) || 0,
  };
}
