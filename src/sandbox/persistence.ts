/**
 * The data file: loaded at start, saved after every change. A save writes a temp file and
 * renames it over the old one, so a crash leaves either the old or the new state. Saves are
 * group commits: a write request's answer waits until a save that includes its change has
 * finished, and every change made while one save runs is covered by the next single save,
 * so a burst of concurrent writes costs a few saves, not one per request.
 *
 * Format: NDJSON, a header line, then one line per group, user (with its `groups`) and ACL.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { aclRecordSchema, groupRecordSchema, userRecordSchema } from '../admin/schemas.js';
import { PorterError } from '../errors/porter-error.js';
import type { Logger } from '../util/logger.js';
import type { SandboxStore, StoreSnapshot } from './store.js';
import { makeAcl, makeGroup, makeUser } from './stored.js';

const FORMAT = 'porter-sandbox';
const FORMAT_VERSION = 1;
const WRITE_CHUNK_CHARS = 1024 * 1024;

/** Saves the store to its data file with group commits. */
export class Persistence {
  private savedVersion: number;
  private saving: Promise<void> | undefined;

  private constructor(
    readonly file: string,
    private readonly store: SandboxStore,
    private readonly logger: Logger,
  ) {
    this.savedVersion = store.version;
  }

  /** Loads `file` into the empty store when it exists; later changes are saved to it. */
  static async open(file: string, store: SandboxStore, logger: Logger): Promise<Persistence> {
    await mkdir(dirname(file), { recursive: true });
    const loaded = await loadFile(file, store);
    if (loaded) logger.info({ file, ...store.counts() }, 'sandbox state loaded');
    return new Persistence(file, store, logger);
  }

  /** Resolves once the file holds every change made before the call. */
  async commit(): Promise<void> {
    const target = this.store.version;
    while (this.savedVersion < target) {
      this.saving ??= this.saveOnce().finally(() => {
        this.saving = undefined;
      });
      await this.saving;
    }
  }

  private async saveOnce(): Promise<void> {
    const version = this.store.version;
    const snapshot = this.store.snapshot();
    try {
      await writeSnapshot(this.file, snapshot);
    } catch (error) {
      this.logger.error({ file: this.file, err: error }, 'sandbox state could not be saved');
      throw error;
    }
    this.savedVersion = version;
    this.store.stats.saves++;
  }
}

/** Writes the snapshot to a temp file beside `file`, flushes it to disk, and renames it over `file`. */
async function writeSnapshot(file: string, snapshot: StoreSnapshot): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w');
  try {
    let buffer =
      JSON.stringify({
        format: FORMAT,
        version: FORMAT_VERSION,
        nextUserId: snapshot.nextUserId,
        nextGroupId: snapshot.nextGroupId,
      }) + '\n';
    const lines = function* (): Generator<string> {
      for (const group of snapshot.groups) yield JSON.stringify({ group });
      for (const user of snapshot.users) {
        yield JSON.stringify({
          user: { ...user, groups: snapshot.memberships.get(user.userId) ?? [] },
        });
      }
      for (const acl of snapshot.acls) yield JSON.stringify({ acl });
    };
    for (const line of lines()) {
      buffer += line + '\n';
      if (buffer.length >= WRITE_CHUNK_CHARS) {
        await handle.write(buffer);
        buffer = '';
      }
    }
    await handle.write(buffer);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temp, file);
}

/** Reads the data file into the store; false when there is no file yet. */
async function loadFile(file: string, store: SandboxStore): Promise<boolean> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const opened = await new Promise<boolean>((resolve, reject) => {
    input.once('open', () => resolve(true));
    input.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? resolve(false) : reject(error),
    );
  });
  if (!opened) return false;
  let lineNumber = 0;
  let header: { nextUserId: number; nextGroupId: number } | undefined;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    lineNumber++;
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (!header) {
        header = readHeader(entry);
        continue;
      }
      if ('group' in entry) {
        const group = checked(groupRecordSchema, entry.group, ['id', 'name']);
        store.putGroup(makeGroup(group as Parameters<typeof makeGroup>[0]));
      } else if ('user' in entry) {
        const user = checked(userRecordSchema, entry.user, ['userId', 'username']);
        // Groups come first in the file, so memberships resolve as users are read.
        const groups = (user.groups ?? []).filter((groupId) => store.getGroup(groupId));
        store.putUser(makeUser(user.userId as number, user.username as string, user), groups);
      } else if ('acl' in entry) {
        const acl = checked(aclRecordSchema, entry.acl, ['id', 'name', 'groupId', 'workspaces']);
        // ACLs whose group is gone (a hand-edited file) are dropped rather than left dangling.
        if (store.getGroup(acl.groupId as number))
          store.putAcl(makeAcl(acl as Parameters<typeof makeAcl>[0]));
      } else {
        throw new Error('expected a "group", "user" or "acl" entry');
      }
    } catch (error) {
      throw new PorterError(
        'PORTER_CONFIG_INVALID',
        `sandbox data file ${file}, line ${lineNumber}: ${(error as Error).message}`,
        { cause: error, details: { line: lineNumber } },
      );
    }
  }
  if (header) store.raiseIdCounters(header.nextUserId, header.nextGroupId);
  return true;
}

function readHeader(entry: Record<string, unknown>): { nextUserId: number; nextGroupId: number } {
  if (entry.format !== FORMAT || entry.version !== FORMAT_VERSION) {
    throw new Error(`not a ${FORMAT} file of version ${FORMAT_VERSION}`);
  }
  return { nextUserId: Number(entry.nextUserId) || 1, nextGroupId: Number(entry.nextGroupId) || 1 };
}

function checked<T extends Record<string, unknown>>(
  schema: {
    safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error };
  },
  value: unknown,
  required: readonly string[],
): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(result.error.message);
  for (const field of required) {
    if (result.data[field] === undefined) throw new Error(`record without ${field}`);
  }
  return result.data;
}
