/**
 * SCIM user creates gathered into multi-record calls (docs/scim.md#many-requests-few-calls).
 * An identity provider sends one request per hire, many at once; each create that arrives for a
 * target within a short window (PORTER_SCIM_WINDOW_MS, at most PORTER_SCIM_MAX_BATCH of them)
 * goes out in one POST of the admin interface, and each request is answered with its own
 * record's result.
 *
 * The names are checked against a read of the target's users' names (kept NAMES_FRESH_MS, read
 * again after a SCIM delete or rename; a new read starts when a window opens, so that it overlaps
 * the wait): a name, or a look-alike of one, held by a user, by a user this process created since
 * the read, or by a create still in flight is refused as uniqueness, and so is the second of two
 * look-alikes in one window. While batches are being sent the next gathers, and leaves when one
 * is answered (a group commit, src/util/window-batcher.ts): the busier the target, the fuller
 * the calls.
 *
 * A batch the server refuses, or whose outcome is unknown (no answer, a 5xx), is read back by
 * username before anyone is answered: each user it created is answered as created (a server may
 * apply the records before a bad one); after a refusal the others go again one at a time, so a
 * bad record fails alone; after no answer they are answered with a retryable status. Nothing is
 * sent twice by porter; a provider's retry of a create that did land meets its own name, as
 * uniqueness.
 */
import type { AdminClient } from '../admin/client.js';
import type { UserRecord } from '../admin/schemas.js';
import { AdminError } from '../admin/errors.js';
import { ERROR_CODES } from '../errors/codes.js';
import { PorterError } from '../errors/porter-error.js';
import { lookalikeKey } from '../ingest/lookalike.js';
import { OnePer } from '../util/one-per.js';
import { WindowBatcher } from '../util/window-batcher.js';
import { noteUserCount } from './scim-read-gather.js';

export interface GatherOptions {
  /** How long the first create of a window waits for others, in ms. */
  windowMs: number;
  /** The most creates in one call; a full window leaves at once. */
  maxBatch: number;
}

/**
 * The key under which names a reader cannot tell apart meet: spaces at the ends dropped, then
 * the imports' look-alike key (NFKC, case folding, invisible characters dropped, a TR39
 * skeleton), so "ADMIN", "аdmin" (Cyrillic а) and "ad\u200Dmin" are all "admin".
 */
export function nameKey(name: string | undefined): string {
  return lookalikeKey((name ?? '').trim());
}

/** PORTER_SCIM_UNIQUENESS for `name`, held by `holder`. */
export function nameTaken(name: string, holder: string): PorterError {
  return new PorterError('PORTER_SCIM_UNIQUENESS', `userName "${name}" is taken by ${holder}`);
}

interface Pending {
  record: UserRecord;
  key: string;
  resolve(created: UserRecord): void;
  reject(error: unknown): void;
}

export class UserCreateGatherer {
  private readonly batcher: WindowBatcher<Pending, Listing>;
  /** The last read of the names, kept while it is fresh. */
  private names: Listing | undefined;
  /** Name keys of creates sent and not yet answered, with how many. */
  private readonly inFlight = new Map<string, number>();
  /**
   * Name keys of users this gatherer created, with when: a read started before they landed
   * may not show them, so they are checked beside it.
   */
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly client: AdminClient,
    options: GatherOptions,
  ) {
    // a window's opening starts the read its names are checked against
    this.batcher = new WindowBatcher(
      { ...options, inFlight: BATCHES_IN_FLIGHT },
      (batch, listing) => this.send(batch, listing),
      () => this.read(),
    );
  }

  /** Creates one user; resolves with the record the server returned (with its userId). */
  create(record: UserRecord): Promise<UserRecord> {
    return new Promise<UserRecord>((resolve, reject) => {
      const key = nameKey(record.username);
      const created = (user: UserRecord): void => {
        this.recent.set(key, Date.now());
        resolve(user);
      };
      this.batcher.add({ record, key, resolve: created, reject });
    });
  }

  /**
   * The names of the target's users: the last read while it is fresh (NAMES_FRESH_MS), else a
   * new one, awaited when the window closes. Only their look-alike keys are kept.
   */
  private read(): Listing {
    const now = Date.now();
    if (this.names && now - this.names.startedAt < NAMES_FRESH_MS) return this.names;
    const names = this.readNames();
    const listing: Listing = { names, startedAt: now };
    this.names = listing;
    // a failure fails the window's creates when it is awaited, and is not kept
    names.catch(() => {
      if (this.names === listing) this.names = undefined;
    });
    return listing;
  }

  /** The look-alike keys of the target's users' names, streamed: no user is kept whole. */
  private async readNames(): Promise<ReadonlyMap<string, string>> {
    const keys = new Map<string, string>();
    let count = 0;
    for await (const user of this.client.stream('users')) {
      count++;
      keys.set(nameKey(user.username), `user ${user.userId}`);
    }
    noteUserCount(this.client, count);
    return keys;
  }

  /** Reads the names again at the next create: a user was deleted or renamed. */
  forgetNames(): void {
    this.names = undefined;
  }

  private async send(batch: Pending[], listing: Listing): Promise<void> {
    let names: ReadonlyMap<string, string>;
    try {
      names = await listing.names;
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    // a user created before the read started is in it (or was deleted since, and its name is
    // free again); one created since is checked here, and so are the batch's own names
    const holders = new Map<string, string>();
    const now = Date.now();
    for (const [key, at] of this.recent) {
      if (now - at > RECENT_KEEP_MS) this.recent.delete(key);
      else if (at >= listing.startedAt) holders.set(key, 'a user just created');
    }
    const accepted: Pending[] = [];
    for (const pending of batch) {
      const holder =
        names.get(pending.key) ??
        holders.get(pending.key) ??
        (this.inFlight.has(pending.key) ? 'a user being created' : undefined);
      if (holder !== undefined) {
        pending.reject(nameTaken(pending.record.username ?? '', holder));
        continue;
      }
      holders.set(pending.key, 'a user being created');
      accepted.push(pending);
    }
    if (accepted.length === 0) return;
    for (const { key } of accepted) this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    try {
      await this.post(accepted);
    } finally {
      for (const { key } of accepted) {
        const left = this.inFlight.get(key)! - 1;
        if (left === 0) this.inFlight.delete(key);
        else this.inFlight.set(key, left);
      }
    }
  }

  private async post(batch: Pending[]): Promise<void> {
    let failure: unknown;
    let created: UserRecord[] = [];
    try {
      created = await this.client.postUsers(batch.map((pending) => pending.record));
    } catch (error) {
      failure = error;
    }
    let unsure = batch;
    if (failure === undefined) {
      const byName = new Map(created.map((user) => [user.username, user]));
      unsure = batch.filter((pending) => {
        const user = byName.get(pending.record.username);
        if (user?.userId === undefined) return true;
        pending.resolve(user);
        return false;
      });
      if (unsure.length === 0) return;
    }
    // a refusal, no answer, or an answer without some records: what the server holds now says
    // which were created (a server may apply the records before a bad one, or leave one out)
    let users: UserRecord[];
    try {
      users = await this.client.listUsers();
    } catch (error) {
      for (const pending of unsure) pending.reject(failure ?? error);
      return;
    }
    const byName = new Map(users.map((user) => [user.username, user]));
    const missing = unsure.filter((pending) => {
      const user = byName.get(pending.record.username);
      // a user of that name that holds other values was made by someone else meanwhile
      if (user?.userId === undefined || !holdsSent(pending.record, user)) return true;
      pending.resolve({ ...pending.record, ...user });
      return false;
    });
    if (missing.length === 0) return;
    // an error porter does not know (a fault of its own) leaves the outcome unknown
    const kind = failure instanceof PorterError ? ERROR_CODES[failure.code].kind : 'ambiguous';
    if (kind === 'permanent' && missing.length > 1) {
      // refused: one record may be the cause; each left goes again alone and fails alone
      await Promise.all(missing.map((pending) => this.post([pending])));
      return;
    }
    for (const pending of missing) {
      const name = pending.record.username ?? '';
      if (failure instanceof AdminError && failure.errorcode === 'ALREADY_EXISTS')
        pending.reject(nameTaken(name, 'a user created meanwhile'));
      else if (byName.has(name)) pending.reject(nameTaken(name, 'a user created meanwhile'));
      else
        pending.reject(
          failure ?? new PorterError('PORTER_CONFLICT', `the DAM did not create "${name}"`),
        );
    }
  }
}

/**
 * Whether a user the server holds has the values a create sent: every text field but
 * `position`, which the admin interface answers empty (docs/sandbox.md).
 */
export function holdsSent(sent: UserRecord, user: UserRecord): boolean {
  for (const [field, value] of Object.entries(sent)) {
    if (typeof value !== 'string' || field === 'position') continue;
    if ((user as Record<string, unknown>)[field] !== value) return false;
  }
  return true;
}

/**
 * Batches of one target sent at once by one process; the next waits for one of them, gathering
 * meanwhile. More than one keeps a slow DAM from making every create wait for the one before.
 */
export const BATCHES_IN_FLIGHT = 4;

/** How long a created name is remembered: longer than any read of the users may take. */
const RECENT_KEEP_MS = 10 * 60_000;

/**
 * How long one read of the users' names serves the creates that follow. A name taken by another
 * route (a file import, another API process) within it is refused by the DAM when it is the same
 * name, and may be missed when it only looks alike.
 */
const NAMES_FRESH_MS = 10_000;

/** A read of the target's users' names (look-alike key → who holds it), and when it was asked for. */
interface Listing {
  names: Promise<ReadonlyMap<string, string>>;
  startedAt: number;
}

/** One gatherer per admin client (per target, per process). */
const gatherers = new OnePer<AdminClient, UserCreateGatherer>();

export function userCreateGatherer(
  client: AdminClient,
  options: GatherOptions,
): UserCreateGatherer {
  return gatherers.of(client, () => new UserCreateGatherer(client, options));
}
