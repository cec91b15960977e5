/** Options of the sandbox, their defaults, and the one place they are checked. */
import { PorterError } from '../errors/porter-error.js';
import type { Logger } from '../util/logger.js';

/** What a write does when one of its records fails. */
export type BatchFailure = 'atomic' | 'partial' | 'omit';
const BATCH_FAILURES: readonly BatchFailure[] = ['atomic', 'partial', 'omit'];

/** Injected misbehaviour. Every fault is off by default. */
export interface FaultOptions {
  /** Milliseconds every answer of the admin routes waits before it is sent. @defaultValue 0 */
  latencyMs: number;
  /** Probability (0..1) that a request is refused with 503 before its body is read. @defaultValue 0 */
  failRate: number;
  /**
   * Probability (0..1) that a request is applied and then its connection destroyed unanswered.
   * Decided when it arrives; a request that is refused (401, 400, 404, …) is answered instead.
   * @defaultValue 0
   */
  dropRate: number;
  /** Requests allowed per second before 429 with Retry-After; 0 = no limit. @defaultValue 0 */
  rateLimit: number;
  /** Records allowed in one request before 413; 0 = no limit. @defaultValue 0 */
  maxRecords: number;
  /**
   * atomic: a failing record applies nothing; partial: records before it are applied, then the
   * error answer; omit: every other record is applied and the answer is 200 with only those, the
   * failing ones left out without an error (what some real servers do). @defaultValue 'atomic'
   */
  batchFailure: BatchFailure;
}

/** No faults: the sandbox behaves. */
export const DEFAULT_FAULTS: Readonly<FaultOptions> = Object.freeze({
  latencyMs: 0,
  failRate: 0,
  dropRate: 0,
  rateLimit: 0,
  maxRecords: 0,
  batchFailure: 'atomic',
});

/** Records generated at start-up into an empty store. */
export interface SeedOptions {
  users?: number;
  groups?: number;
  acls?: number;
}

/** Everything a sandbox can be started with; all optional. */
export interface SandboxOptions {
  /** Interface to listen on. @defaultValue '127.0.0.1' */
  host?: string;
  /** Port to listen on; 0 picks a free one. @defaultValue 8080 */
  port?: number;
  /** The flags that choose host and port, named when the address is refused. @defaultValue '--host or --port' */
  addressFlags?: string;
  /** When set, requests must carry it as `apikey` query parameter or header. */
  apiKey?: string;
  /** With `password`: requests may authenticate by HTTP Basic or `user`/`pass` parameters. */
  user?: string;
  password?: string;
  /**
   * File the state is loaded from at start and kept in: a snapshot, with a journal of every
   * change beside it (`FILE.journal`); unset = memory only.
   */
  dataFile?: string;
  /**
   * The data file's journal is folded into a new snapshot once it is larger than both this
   * and the snapshot. @defaultValue 64 MiB
   */
  compactJournalBytes?: number;
  /** Records generated when the store starts empty. */
  seed?: SeedOptions;
  faults?: Partial<FaultOptions>;
  /** @defaultValue a logger that writes nothing */
  logger?: Logger;
  /** Source of fault decisions; inject one to make fault tests deterministic. @defaultValue Math.random */
  random?: () => number;
  /** Clock of the rate limiter, in milliseconds. @defaultValue Date.now */
  now?: () => number;
  /**
   * How `latencyMs` is waited before an answer to a request with this HTTP method; inject one
   * to see or hold the waits in tests. @defaultValue a timer
   */
  sleep?: (ms: number, method: string) => Promise<void>;
  /** Largest accepted request body in bytes. @defaultValue 64 MiB */
  bodyLimit?: number;
}

const isWhole = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isProbability = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;

/** What each fault option accepts, as checks and as words for the error message. */
const FAULT_RULES: {
  [K in keyof FaultOptions]: { valid: (value: unknown) => boolean; expected: string };
} = {
  latencyMs: {
    valid: (value) => isWhole(value) && value <= 600_000,
    expected: 'a whole number of milliseconds from 0 to 600000',
  },
  failRate: { valid: isProbability, expected: 'a probability from 0 to 1' },
  dropRate: { valid: isProbability, expected: 'a probability from 0 to 1' },
  rateLimit: { valid: isWhole, expected: 'a whole number of requests per second (0 = no limit)' },
  maxRecords: { valid: isWhole, expected: 'a whole number of records (0 = no limit)' },
  batchFailure: {
    valid: (value) => BATCH_FAILURES.includes(value as BatchFailure),
    expected: '"atomic", "partial" or "omit"',
  },
};

/** Checks fault options; throws PORTER_USAGE naming the first bad one. */
export function checkFaults(faults: Partial<FaultOptions>): Partial<FaultOptions> {
  for (const [name, value] of Object.entries(faults)) {
    if (value === undefined) continue;
    const rule = FAULT_RULES[name as keyof FaultOptions];
    if (!rule) throw usage(`unknown fault option "${name}"`);
    if (!rule.valid(value))
      throw usage(`fault option ${name} must be ${rule.expected}, got ${String(value)}`);
  }
  return faults;
}

/** Words describing what a fault option accepts, for CLI messages. */
export function faultExpectation(name: keyof FaultOptions): string {
  return FAULT_RULES[name].expected;
}

/** Checks every sandbox option once at start-up; throws PORTER_USAGE naming the bad one. */
export function checkSandboxOptions(options: SandboxOptions): void {
  if (options.port !== undefined && !(isWhole(options.port) && options.port <= 65_535)) {
    throw usage(`port must be a whole number from 0 to 65535, got ${String(options.port)}`);
  }
  if ((options.user === undefined) !== (options.password === undefined)) {
    throw usage('user and password go together: set both or neither');
  }
  if (options.user === '') throw usage('user must not be empty');
  if (options.apiKey === '') throw usage('apiKey must not be empty');
  for (const [name, count] of Object.entries(options.seed ?? {})) {
    if (count !== undefined && !isWhole(count)) {
      throw usage(`seed ${name} must be a whole number, got ${String(count)}`);
    }
  }
  if ((options.seed?.acls ?? 0) > 0 && !(options.seed?.groups ?? 0)) {
    throw usage('seeded ACLs belong to seeded groups: seed at least one group');
  }
  if (
    options.compactJournalBytes !== undefined &&
    !(isWhole(options.compactJournalBytes) && options.compactJournalBytes > 0)
  ) {
    throw usage(
      `compactJournalBytes must be a positive whole number of bytes, got ${String(options.compactJournalBytes)}`,
    );
  }
  if (options.bodyLimit !== undefined && !(isWhole(options.bodyLimit) && options.bodyLimit > 0)) {
    throw usage(
      `bodyLimit must be a positive whole number of bytes, got ${String(options.bodyLimit)}`,
    );
  }
  checkFaults(options.faults ?? {});
}

function usage(message: string): PorterError {
  return new PorterError('PORTER_USAGE', `sandbox: ${message}`);
}
