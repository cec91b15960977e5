/**
 * SCIM user updates gathered into multi-record calls (docs/scim.md#many-requests-few-calls), as
 * creates are (scim-gather.ts): the PUTs of the admin interface that SCIM's PUT and PATCH
 * requests make for a target within a short window go out in one call, and each request is
 * answered with its own record's result. A user's updates go one after the other: a second
 * update of a user waits until the first is answered, so it is never in the same call or in one
 * sent at the same time.
 *
 * An update overwrites a user with the whole record, so sending it again is harmless: after a
 * refusal the records go again one at a time, so a bad one fails alone. A batch whose outcome is
 * unknown (no answer, a 5xx, records missing from the answer) is read back: a user that holds the
 * values sent is answered as updated, the others with the failure (a retryable status for no
 * answer, which the provider's retry resolves by sending the update again).
 */
import type { AdminClient } from '../admin/client.js';
import type { UserRecord } from '../admin/schemas.js';
import { ERROR_CODES } from '../errors/codes.js';
import { PorterError } from '../errors/porter-error.js';
import { KeyedSerial } from '../util/keyed-serial.js';
import { OnePer } from '../util/one-per.js';
import { WindowBatcher } from '../util/window-batcher.js';
import { BATCHES_IN_FLIGHT, holdsSent, type GatherOptions } from './scim-gather.js';

interface Pending {
  record: UserRecord & { userId: number };
  resolve(updated: UserRecord): void;
  reject(error: unknown): void;
}

export class UserUpdateGatherer {
  private readonly batcher: WindowBatcher<Pending>;
  /** A user's updates, one at a time: the next waits until the one before is answered. */
  private readonly busy = new KeyedSerial<number>();

  constructor(
    private readonly client: AdminClient,
    options: GatherOptions,
  ) {
    this.batcher = new WindowBatcher({ ...options, inFlight: BATCHES_IN_FLIGHT }, (batch) =>
      this.send(batch),
    );
  }

  /**
   * Overwrites the user `record.userId` with `record`; resolves with the user as the server now
   * holds it (the record sent, with what the server answered over it).
   */
  update(record: UserRecord & { userId: number }): Promise<UserRecord> {
    return this.busy.run(
      record.userId,
      () =>
        new Promise<UserRecord>((resolve, reject) => this.batcher.add({ record, resolve, reject })),
    );
  }

  private async send(batch: Pending[]): Promise<void> {
    let failure: unknown;
    let answered: UserRecord[] = [];
    try {
      answered = await this.client.putUsers(batch.map((pending) => pending.record));
    } catch (error) {
      failure = error;
    }
    let unsure = batch;
    if (failure === undefined) {
      const byId = new Map(answered.map((user) => [Number(user.userId), user]));
      unsure = batch.filter((pending) => {
        const user = byId.get(pending.record.userId);
        if (user === undefined) return true;
        pending.resolve({ ...pending.record, ...user });
        return false;
      });
      if (unsure.length === 0) return;
    }
    // an error porter does not know (a fault of its own) leaves the outcome unknown
    const kind = failure instanceof PorterError ? ERROR_CODES[failure.code].kind : 'ambiguous';
    if (kind === 'permanent' && unsure.length > 1) {
      // refused: one record may be the cause; each goes again alone and fails alone
      await Promise.all(unsure.map((pending) => this.send([pending])));
      return;
    }
    if (kind === 'permanent') {
      unsure[0]!.reject(failure);
      return;
    }
    // no answer, or an answer without some records: what the server holds says which landed
    let users: UserRecord[];
    try {
      users =
        unsure.length === 1
          ? await this.client.listUsers({ userId: unsure[0]!.record.userId })
          : await this.client.listUsers();
    } catch (error) {
      for (const pending of unsure) pending.reject(failure ?? error);
      return;
    }
    const byId = new Map(users.map((user) => [Number(user.userId), user]));
    for (const pending of unsure) {
      const user = byId.get(pending.record.userId);
      if (user !== undefined && holdsSent(pending.record, user)) {
        pending.resolve({ ...pending.record, ...user });
      } else {
        pending.reject(
          failure ??
            new PorterError(
              'PORTER_CONFLICT',
              `the DAM did not apply the update of user ${pending.record.userId}`,
            ),
        );
      }
    }
  }
}

/** One gatherer per admin client (per target, per process). */
const gatherers = new OnePer<AdminClient, UserUpdateGatherer>();

export function userUpdateGatherer(
  client: AdminClient,
  options: GatherOptions,
): UserUpdateGatherer {
  return gatherers.of(client, () => new UserUpdateGatherer(client, options));
}
