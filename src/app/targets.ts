/** Target use cases shared by the CLI and the HTTP API: list the targets, check them live. */
import { RESOURCE_NAMES, type ResourceName } from '../admin/resources.js';
import type { TargetSummary } from '../targets/targets.js';
import type { PorterContext } from './context.js';
import { describeFailure, probeTarget } from './readiness.js';

/** Every target of this process, as it may be shown: no secret, only where secrets come from. */
export function listTargets(context: PorterContext): TargetSummary[] {
  return context.targets.list().map((target) => target.summary);
}

export interface TargetCheck {
  name: string;
  url: string;
  ok: boolean;
  /** Why not, in words an operator can act on (never a credential). */
  reason?: string;
  /** The first answer's time, in milliseconds. */
  answerMs?: number;
  /** Records on the server, read in bulk (with `counts`). */
  counts?: Partial<Record<ResourceName, number>>;
  readOnly: boolean;
}

/**
 * Checks targets live, one after another: reachable, signed in (a cheap read), and with
 * `counts` how many users, groups and ACLs each holds (each resource read once, streamed).
 */
export async function checkTargets(
  context: PorterContext,
  names: string[] = context.targets.names(),
  options: { counts?: boolean } = {},
): Promise<TargetCheck[]> {
  const checks: TargetCheck[] = [];
  for (const name of names) {
    const target = context.targets.require(name);
    const check: TargetCheck = {
      name,
      url: target.summary.url,
      ok: false,
      readOnly: target.readOnly,
    };
    checks.push(check);
    if (!target.client) {
      check.reason = target.summary.problem ?? 'its secrets cannot be read';
      continue;
    }
    const client = context.createAdminClient(2, target);
    const timeoutMs = context.env.PORTER_READY_TIMEOUT_MS;
    try {
      const startedAt = performance.now();
      const refused = await probeTarget(client, AbortSignal.timeout(timeoutMs));
      check.answerMs = Math.round(performance.now() - startedAt);
      if (refused) {
        check.reason = refused;
        continue;
      }
      if (options.counts) {
        const counts: Partial<Record<ResourceName, number>> = {};
        for (const resource of RESOURCE_NAMES) {
          let count = 0;
          for await (const records of client.streamBatches(resource)) count += records.length;
          counts[resource] = count;
        }
        check.counts = counts;
      }
      check.ok = true;
    } catch (error) {
      check.reason = describeFailure(error, timeoutMs);
    } finally {
      await client.close();
    }
  }
  return checks;
}
