/**
 * Whether this process can do its work now: Redis answers a PING, and the admin server answers a
 * cheap read (GET of groups by a name no group has, which returns an empty list), each within a
 * short timeout. Results are kept for a moment and concurrent checks share one, so probes from
 * several places never add load on the admin server.
 */
import { AdminClient, adminCallOutcome } from '../admin/client.js';
import { adminClientOptionsFromEnv } from '../admin/env-options.js';
import { AdminHttpError } from '../admin/errors.js';
import type { PorterContext } from './context.js';

export interface ReadinessCheck {
  ok: boolean;
  /** How long the check took, in milliseconds. */
  ms: number;
  /** Why it is not ok, in a few words. */
  reason?: string;
}

export interface Readiness {
  ready: boolean;
  /** Set once the process is stopping: it takes no new work, whatever the checks say. */
  stopping?: boolean;
  checks: { redis: ReadinessCheck; admin: ReadinessCheck };
}

export interface ReadinessOptions {
  /** Time each check may take. @defaultValue PORTER_READY_TIMEOUT_MS */
  timeoutMs?: number;
  /** How long an answer is reused. @defaultValue 1000 */
  reuseMs?: number;
}

/** A group name no directory holds: its GET returns an empty list, cheap on any server. */
const PROBE_GROUP_NAME = 'porter-readiness-probe';

async function timed(
  timeoutMs: number,
  check: (signal: AbortSignal) => Promise<string | undefined>,
): Promise<ReadinessCheck> {
  const startedAt = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    const reason = await Promise.race([
      check(signal).catch((error: unknown) => describeFailure(error, timeoutMs)),
      expired,
    ]);
    const ms = Math.round(performance.now() - startedAt);
    return reason === undefined ? { ok: true, ms } : { ok: false, ms, reason };
  } finally {
    clearTimeout(timer);
  }
}

/** A failure in words an operator can act on; never a credential or a stack. */
function describeFailure(error: unknown, timeoutMs: number): string {
  if ((error as Error | undefined)?.name === 'TimeoutError') {
    return `no answer within ${timeoutMs} ms`;
  }
  switch (adminCallOutcome(error)) {
    case 'unreachable':
      return 'cannot connect';
    case 'no_answer':
      return 'no answer';
    case 'bad_answer':
      return 'answered something other than the admin interface';
    case 'server_error':
    case 'refused':
    case 'rate_limited':
      return `answered HTTP ${(error as AdminHttpError).status ?? '?'}`;
    default:
      return (error as Error | undefined)?.message?.slice(0, 200) || 'failed';
  }
}

/** The readiness of one process, over its porter context. */
export class ReadinessProbe {
  private readonly timeoutMs: number;
  private readonly reuseMs: number;
  private readonly client: AdminClient;
  private last: { at: number; readiness: Readiness } | undefined;
  private running: Promise<Readiness> | undefined;
  private stopping = false;

  constructor(
    private readonly context: PorterContext,
    options: ReadinessOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? context.env.PORTER_READY_TIMEOUT_MS;
    this.reuseMs = options.reuseMs ?? 1_000;
    // a client of its own: outside the shared rate cap and back-off, and one connection at most
    this.client = new AdminClient({
      ...adminClientOptionsFromEnv(context.env),
      connections: 1,
      connectTimeoutMs: this.timeoutMs,
      requestTimeoutMs: this.timeoutMs,
    });
  }

  async check(): Promise<Readiness> {
    const readiness = await this.checkReused();
    return this.stopping ? { ...readiness, ready: false, stopping: true } : readiness;
  }

  /** From now on the process is not ready: it is draining its work before it exits. */
  markStopping(): void {
    this.stopping = true;
  }

  private async checkReused(): Promise<Readiness> {
    if (this.last && Date.now() - this.last.at < this.reuseMs) return this.last.readiness;
    this.running ??= this.checkNow().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private async checkNow(): Promise<Readiness> {
    const [redis, admin] = await Promise.all([
      timed(this.timeoutMs, async () => {
        await this.context.redis.ping();
        return undefined;
      }),
      timed(this.timeoutMs, async (signal) => {
        try {
          await this.client.listGroups({ name: PROBE_GROUP_NAME }, signal);
        } catch (error) {
          // an answer that says no such group, or asks for fewer requests, is an answer
          if (error instanceof AdminHttpError && (error.status === 404 || error.status === 429)) {
            return undefined;
          }
          if (error instanceof AdminHttpError && (error.status === 401 || error.status === 403)) {
            return `refuses porter's credentials (HTTP ${error.status})`;
          }
          throw error;
        }
        return undefined;
      }),
    ]);
    const readiness: Readiness = { ready: redis.ok && admin.ok, checks: { redis, admin } };
    this.last = { at: Date.now(), readiness };
    return readiness;
  }
}
