/**
 * porter under Redis faults. Each run: a Redis of its own (append-only, fsync every second), or a
 * Sentinel set; two `porter worker` processes (concurrency 4); one import creating N users in
 * batches of `--batch` against a sandbox answering after `--latency` ms. When 30 % of the records have a
 * result the fault lands:
 *
 * - clean: nothing (the baseline; its times count from the 30 % mark);
 * - restart: Redis stopped cleanly, started again 10 s later from its files;
 * - kill9: Redis killed with SIGKILL and started again at once (up to a second of writes lost);
 * - rollback: a power cut: the append-only files are copied, Redis is killed 1 s later and
 *   started from the copy, so the last second of writes is lost;
 * - lost-worker: one worker killed with SIGKILL;
 * - cut-link: one worker's link to Redis held for 60 s (a TCP proxy that passes nothing on, the
 *   process alive), while the other goes on;
 * - failover: `SENTINEL FAILOVER` on a master, a replica and three Sentinels.
 *
 * Prints a line per run: the import's counts, users on the server (a duplicate shows as more than
 * N), write calls the sandbox served (POST, PUT, DELETE, refused ones included), the 409 answers
 * among them, the most times one user was sent, GET calls, how long Redis was away (the cut link:
 * for the one worker; the failover: until the Sentinels named the new master), results Redis lost
 * (kill9, rollback), the time from the fault to the first `taking over a batch` line, and the
 * time from the fault to the import's end.
 *
 *   npx tsx bench/redis-faults.ts [--fault clean|restart|kill9|rollback|lost-worker|cut-link|failover|all]
 *     [--users 30000] [--latency 40] [--batch 10] [--json] [--verbose: the workers' lines]
 */
import { parseArgs } from 'node:util';
import { startRedisNode, type RedisNode } from '../test/helpers/redis-node.js';
import { startSentinelSet, type SentinelSet } from '../test/helpers/redis-topology.js';
import { startLink, type CuttableLink } from '../test/helpers/tcp-link.js';
import { firstLineAfter, startRig, TAKEOVER_LINE, type RedisEnv } from './import-rig.js';

const FAULTS = [
  'clean',
  'restart',
  'kill9',
  'rollback',
  'lost-worker',
  'cut-link',
  'failover',
] as const;
type Fault = (typeof FAULTS)[number];

const RESTART_AFTER_MS = 10_000;
const ROLLBACK_MS = 1_000;
const CUT_MS = 60_000;
const SETTLE_TIMEOUT_MS = 180_000;

const { values } = parseArgs({
  options: {
    fault: { type: 'string', default: 'all' },
    users: { type: 'string', default: '30000' },
    latency: { type: 'string', default: '40' },
    batch: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
const chosen = values.fault === 'all' ? [...FAULTS] : [values.fault as Fault];
if (!chosen.every((fault) => FAULTS.includes(fault))) {
  throw new Error(`--fault: one of ${FAULTS.join(', ')} or all`);
}
const users = Number(values.users);
const latencyMs = Number(values.latency);
const batchSize = Number(values.batch);

export interface FaultRun {
  fault: Fault;
  users: number;
  latencyMs: number;
  batchSize: number;
  settled: boolean;
  state: string;
  succeeded: number;
  failed: number;
  unprocessed: number;
  onServer: number;
  writeCalls: number;
  conflicts: number;
  maxSends: number;
  readCalls: number;
  /** Results Redis had when it went down and no longer had when back (a kill or a rollback). */
  resultsLost: number | null;
  /** How long Redis was away (for the cut link: from the cut-off worker), or the failover took. */
  outageMs: number | null;
  takeoverMs: number | null;
  finishMs: number | null;
  runMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Redis for a run: one node, or a Sentinel set for the failover. */
async function startRedis(
  fault: Fault,
): Promise<{ env: RedisEnv; node?: RedisNode; sentinels?: SentinelSet; stop(): Promise<void> }> {
  if (fault === 'failover') {
    const sentinels = await startSentinelSet();
    return {
      env: { REDIS_SENTINELS: sentinels.sentinels, REDIS_SENTINEL_NAME: sentinels.name },
      sentinels,
      stop: () => sentinels.stop(),
    };
  }
  const node = await startRedisNode({ appendFsync: 'everysec' });
  return { env: { REDIS_URL: node.url }, node, stop: () => node.remove() };
}

async function run(fault: Fault): Promise<FaultRun> {
  const redis = await startRedis(fault);
  let link: CuttableLink | undefined;
  let rig: Awaited<ReturnType<typeof startRig>> | undefined;
  try {
    if (fault === 'cut-link') link = await startLink(new URL(redis.env.REDIS_URL!));
    rig = await startRig({ redis: redis.env, latencyMs });
    const a = rig.worker(link ? { REDIS_URL: link.url } : undefined);
    const b = rig.worker();
    await rig.waitWorkers(2);
    const started = Date.now();
    const id = await rig.submitUsers(users, fault, batchSize);
    await rig.waitDone(id, 0.3);
    const doneNow = async (): Promise<number> => {
      for (;;) {
        const info = await rig!.read(id);
        if (info) return info.done;
        await sleep(50);
      }
    };
    let faultAt = Date.now();
    let doneAtFault = 0;
    let doneAfter: number | undefined;
    let outageMs: number | null = null;
    let healed: Promise<void> = Promise.resolve();
    const node = redis.node;
    switch (fault) {
      case 'clean':
        break;
      case 'restart':
        await node!.stop();
        await sleep(RESTART_AFTER_MS - (Date.now() - faultAt));
        await node!.start();
        outageMs = Date.now() - faultAt;
        break;
      case 'kill9':
        doneAtFault = await doneNow();
        await node!.kill();
        await node!.start();
        outageMs = Date.now() - faultAt;
        doneAfter = await doneNow();
        break;
      case 'rollback': {
        const copy = await node!.copyAppendOnly();
        await sleep(ROLLBACK_MS);
        faultAt = Date.now();
        doneAtFault = await doneNow();
        await node!.kill();
        await node!.restoreAppendOnly(copy);
        await node!.start();
        outageMs = Date.now() - faultAt;
        doneAfter = await doneNow();
        break;
      }
      case 'lost-worker':
        a.child.kill('SIGKILL');
        break;
      case 'cut-link':
        link!.cut();
        healed = sleep(CUT_MS).then(() => link!.heal());
        outageMs = CUT_MS;
        break;
      case 'failover':
        // the lost writes are not told apart from the progress made meanwhile: not counted
        await redis.sentinels!.failover();
        outageMs = Date.now() - faultAt;
        break;
    }
    const info = await rig.waitSettled(id, SETTLE_TIMEOUT_MS);
    const endedAt = Date.now();
    // a cut-off worker's held commands reach Redis once the link is back: nothing may change then
    await healed;
    if (link) await sleep(3_000);
    const last = (await rig.read(id)) ?? info;
    const stats = rig.sandbox.store.stats;
    const takeover = firstLineAfter([a, b], TAKEOVER_LINE, faultAt);
    if (values.verbose) {
      for (const [name, worker] of [
        ['a', a],
        ['b', b],
      ] as const) {
        for (const { at, text } of worker.lines()) {
          console.error(`${fault} worker ${name} ${((at - faultAt) / 1000).toFixed(1)} s: ${text}`);
        }
      }
    }
    return {
      fault,
      users,
      latencyMs,
      batchSize,
      settled: info?.settled ?? false,
      state: last?.state ?? 'unknown',
      succeeded: last?.counts.succeeded ?? 0,
      failed: last?.counts.failed ?? 0,
      unprocessed: last?.counts.unprocessed ?? 0,
      onServer: rig.sandbox.store.counts().users,
      writeCalls: stats.requests.POST + stats.requests.PUT + stats.requests.DELETE,
      conflicts: stats.refusals.ALREADY_EXISTS ?? 0,
      maxSends: rig.maxSends(),
      readCalls: stats.requests.GET,
      resultsLost: doneAfter === undefined ? null : Math.max(0, doneAtFault - doneAfter),
      outageMs,
      takeoverMs: takeover === undefined ? null : takeover - faultAt,
      finishMs: info ? endedAt - faultAt : null,
      runMs: endedAt - started,
    };
  } finally {
    await rig?.close();
    link?.close();
    await redis.stop();
  }
}

const seconds = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`);

function line(result: FaultRun): string {
  return [
    `${result.fault.padEnd(11)} ${result.state}${result.settled ? '' : ' (NOT settled)'}:`,
    `${result.succeeded} succeeded, ${result.failed} failed, ${result.unprocessed} unprocessed;`,
    `${result.onServer} users on the server;`,
    `${result.writeCalls} write calls (${result.conflicts} answered 409, a user sent at most ${result.maxSends}×),`,
    `${result.readCalls} GET;`,
    result.outageMs === null ? '' : `outage ${seconds(result.outageMs)},`,
    result.resultsLost === null ? '' : `${result.resultsLost} results lost by Redis;`,
    `takeover ${seconds(result.takeoverMs)}, finished ${seconds(result.finishMs)} after the fault`,
    `(run ${seconds(result.runMs)})`,
  ]
    .filter(Boolean)
    .join(' ');
}

const results: FaultRun[] = [];
for (const fault of chosen) {
  const result = await run(fault);
  results.push(result);
  if (!values.json) console.log(line(result));
}
if (values.json) console.log(JSON.stringify(results, null, 1));
