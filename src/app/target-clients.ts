/**
 * The admin clients of one worker process, one per target, made on a target's first job: each
 * job runs against its own target (src/targets/job-target.ts), through that target's pool,
 * rate cap and 429 back-off, so a slow or failing server holds back its own jobs only.
 */
import type { AdminClient } from '../admin/client.js';
import type { BoundTarget } from '../execute/run-batch.js';
import { jobTarget, type JobTargetRef } from '../targets/job-target.js';
import type { Target } from '../targets/targets.js';
import type { PorterContext } from './context.js';

export class TargetClients {
  private readonly clients = new Map<string, AdminClient>();

  /** `connections`: calls in flight to one target from this process (capped by its maxInFlight). */
  constructor(
    private readonly context: PorterContext,
    private readonly connections?: number,
  ) {}

  /** The client of a job's target; throws the target's refusal, and then nothing is sent. */
  forJob(ref: JobTargetRef): { target: Target; client: AdminClient } {
    const target = jobTarget(this.context.targets, ref);
    let client = this.clients.get(target.name);
    if (!client) {
      client = this.context.createAdminClient(this.connections, target);
      this.clients.set(target.name, client);
    }
    return { target, client };
  }

  /** A batch's or preparation's view of its target: client, own account, shared back-off. */
  bind(ref: JobTargetRef): BoundTarget {
    const { target, client } = this.forJob(ref);
    const gate = this.context.gateOf(target);
    const maxDelayMs = this.context.retryPolicy.maxDelayMs;
    return {
      client,
      selfUser: target.selfUser,
      key: `${target.name}.${target.fingerprint}`,
      // one 429 makes every worker's calls to this target wait out Retry-After (capped: a huge
      // one must not stall the target's imports for hours)
      onRateLimited: (retryAfterMs) => gate.pauseAll(Math.min(retryAfterMs, maxDelayMs)),
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.close()));
  }
}
