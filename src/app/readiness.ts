/**
 * Whether this process can do its work now: Redis answers a PING, and the admin server answers a
 * cheap read (GET of groups by a name no group has, which returns an empty list), each within a
 * short timeout. Results are kept for a moment and concurrent checks share one, so probes from
 * several places never add load on the admin server.
 */
import { AdminClient, adminCallOutcome } from '../admin/client.js';
import { usableTarget } from '../targets/job-target.js';
import type { Target } from '../targets/targets.js';
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
  /**
   * `admin` sums up the targets: ok when every one answers, else the first failure's reason
   * (prefixed with its target's name when there are several); `targets` has each one.
   */
  checks: { redis: ReadinessCheck; admin: ReadinessCheck; targets: Record<string, ReadinessCheck> };
}

export interface ReadinessOptions {
  /** Time each check may take. @defaultValue PORTER_READY_TIMEOUT_MS */
  timeoutMs?: number;
  /** How long an answer is reused. @defaultValue 1000 */
  reuseMs?: number;
}

/** A group name no directory holds: its GET returns an empty list, cheap on any server. */
const PROBE_GROUP_NAME = 'porter-readiness-probe';

export async function timed(
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
export function describeFailure(error: unknown, timeoutMs: number): string {
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

/** A client for probes: one connection, short timeouts, no shared gate. */
export function probeClient(target: Target, timeoutMs: number): AdminClient {
  return new AdminClient({
    ...target.client!,
    connections: 1,
    connectTimeoutMs: timeoutMs,
    requestTimeoutMs: timeoutMs,
  });
}

/**
 * One cheap read of the target (GET of groups by a name no group has): undefined when it
 * answers as the admin interface, else why not, in words an operator can act on.
 */
export async function probeTarget(
  client: AdminClient,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    await client.listGroups({ name: PROBE_GROUP_NAME }, signal);
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
}

/** The readiness of one process, over its porter context. */
export class ReadinessProbe {
  private readonly timeoutMs: number;
  private readonly reuseMs: number;
  private readonly clients = new Map<string, AdminClient>();
  private last: { at: number; readiness: Readiness } | undefined;
  private running: Promise<Readiness> | undefined;
  private stopping = false;

  constructor(
    private readonly context: PorterContext,
    options: ReadinessOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? context.env.PORTER_READY_TIMEOUT_MS;
    this.reuseMs = options.reuseMs ?? 1_000;
  }

  /** A target's client of its own: outside its rate cap and back-off, one connection at most. */
  private clientOf(target: Target): AdminClient {
    let client = this.clients.get(target.name);
    if (!client) {
      client = probeClient(usableTarget(target), this.timeoutMs);
      this.clients.set(target.name, client);
    }
    return client;
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
    await Promise.all([...this.clients.values()].map((client) => client.close()));
  }

  private async checkNow(): Promise<Readiness> {
    const list = this.context.targets.list();
    const [redis, ...answers] = await Promise.all([
      timed(this.timeoutMs, async () => {
        await this.context.redis.ping();
        return undefined;
      }),
      ...list.map((target) =>
        timed(this.timeoutMs, async (signal) => probeTarget(this.clientOf(target), signal)),
      ),
    ]);
    const targets: Record<string, ReadinessCheck> = {};
    list.forEach((target, index) => {
      targets[target.name] = answers[index]!;
    });
    const failing = list.findIndex((_, index) => !answers[index]!.ok);
    const admin: ReadinessCheck =
      failing < 0
        ? { ok: true, ms: Math.max(0, ...answers.map((answer) => answer.ms)) }
        : {
            ...answers[failing]!,
            reason:
              list.length === 1
                ? answers[failing]!.reason
                : `${list[failing]!.name}: ${answers[failing]!.reason ?? 'failed'}`,
          };
    const readiness: Readiness = {
      ready: redis.ok && admin.ok,
      checks: { redis, admin, targets },
    };
    this.last = { at: Date.now(), readiness };
    return readiness;
  }
}
