/**
 * SCIM's reads of one user by id, gathered (docs/scim.md#many-requests-few-calls): a PUT, PATCH
 * or DELETE reads the user before it writes, and an identity provider sends many at once. The
 * first read goes at once; those that arrive while it is out wait for it and then go together,
 * as one read of the target's users when they are many beside the target's size (at least one
 * per READ_ALL_PER users, as known from the last read of them all), else one read per user.
 *
 * A read always starts after the requests it answers arrived, and a user's writes in this
 * process go one at a time (src/app/scim-target-base.ts), so a write never works from a read older
 * than the write before it. A read of them all is streamed, keeping only the users asked for.
 */
import type { AdminClient } from '../admin/client.js';
import { AdminError } from '../admin/errors.js';
import type { UserRecord } from '../admin/schemas.js';
import { mapConcurrent } from '../util/concurrency.js';
import { OnePer } from '../util/one-per.js';
import { WindowBatcher } from '../util/window-batcher.js';

interface Pending {
  userId: number;
  resolve(user: UserRecord | undefined): void;
  reject(error: unknown): void;
}

/** One read of them all serves the reads of a batch once they are one per this many users. */
const READ_ALL_PER = 1000;
/** Reads of one user each, at once, when a batch is read user by user. */
const READS_AT_ONCE = 8;
/** The most reads gathered into one batch. */
const MAX_READS = 1000;

/** Per admin client, how many users the target held at the last read of them all. */
const knownSizes = new WeakMap<AdminClient, number>();

/** Notes the target's size, from a read of all its users. */
export function noteUserCount(client: AdminClient, count: number): void {
  knownSizes.set(client, count);
}

export class UserReadGatherer {
  private readonly batcher: WindowBatcher<Pending>;

  constructor(private readonly client: AdminClient) {
    this.batcher = new WindowBatcher({ windowMs: 0, maxBatch: MAX_READS, inFlight: 1 }, (batch) =>
      this.send(batch),
    );
  }

  /** The user `userId` as the target holds it now; undefined when it holds none. */
  read(userId: number): Promise<UserRecord | undefined> {
    return new Promise((resolve, reject) => this.batcher.add({ userId, resolve, reject }));
  }

  private async send(batch: Pending[]): Promise<void> {
    const ids = [...new Set(batch.map((pending) => pending.userId))];
    const known = knownSizes.get(this.client);
    const readAll =
      ids.length > 1 && known !== undefined && ids.length >= Math.ceil(known / READ_ALL_PER);
    let users: Map<number, UserRecord>;
    try {
      if (readAll) {
        // streamed: only the users asked for are kept, whatever the target's size
        const wanted = new Set(ids);
        let count = 0;
        users = new Map();
        for await (const user of this.client.stream('users')) {
          count++;
          const id = Number(user.userId);
          if (wanted.has(id)) users.set(id, user);
        }
        noteUserCount(this.client, count);
      } else {
        const each = await mapConcurrent(ids, READS_AT_ONCE, (userId) =>
          this.client.listUsers({ userId }).catch(noneWhenNotFound),
        );
        users = new Map(each.flat().map((user) => [Number(user.userId), user]));
      }
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    for (const pending of batch) pending.resolve(users.get(pending.userId));
  }
}

/** A read of one user that a server answers 404 for: it holds none. */
function noneWhenNotFound(error: unknown): UserRecord[] {
  if (error instanceof AdminError && error.errorcode === 'NOT_FOUND') return [];
  throw error;
}

/** One gatherer per admin client (per target, per process). */
const gatherers = new OnePer<AdminClient, UserReadGatherer>();

export function userReadGatherer(client: AdminClient): UserReadGatherer {
  return gatherers.of(client, () => new UserReadGatherer(client));
}
