/**
 * A lost worker: two `porter worker` processes share an import on a Redis of their own; one is
 * killed with SIGKILL part-way. Prints the time from the kill to the other worker's takeover
 * line, the time to finish after the kill, users created (duplicates show as more than the
 * total), write calls, and the commands Redis processed (its load). `bench/redis-faults.ts`
 * runs this fault among others; this one compares lock durations. With `--fail-rate` and
 * `--drop-rate` it is the faults rehearsal: the sandbox also refuses that share of calls with
 * 503 and drops that share of answers after applying them.
 *
 *   npx tsx bench/takeover.ts [--users 3000] [--lock 6000] [--latency 40]
 *       [--fail-rate 0.1] [--drop-rate 0.05] [--stream]
 */
import { parseArgs } from 'node:util';
import { command, startRedisNode } from '../test/helpers/redis-node.js';
import { firstLineAfter, startRig, TAKEOVER_LINE } from './import-rig.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '3000' },
    lock: { type: 'string', default: '6000' },
    latency: { type: 'string', default: '40' },
    'fail-rate': { type: 'string', default: '0' },
    'drop-rate': { type: 'string', default: '0' },
    stream: { type: 'boolean', default: false },
  },
});
const total = Number(values.users);
const node = await startRedisNode();
const rig = await startRig({
  redis: { REDIS_URL: node.url },
  latencyMs: Number(values.latency),
  failRate: Number(values['fail-rate']),
  dropRate: Number(values['drop-rate']),
  env: { PORTER_LOCK_DURATION_MS: values.lock },
});
const commands = async (): Promise<number> =>
  Number(
    /total_commands_processed:(\d+)/.exec(String(await command(node.port, 'INFO', 'stats')))![1],
  );

try {
  const before = await commands();
  const a = rig.worker();
  const b = rig.worker();
  await rig.waitWorkers(2);
  const id = await rig.submitUsers(total, 'takeover', 50, values.stream);
  const started = Date.now();
  await rig.waitDone(id, 0.3);
  a.child.kill('SIGKILL');
  const killedAt = Date.now();
  const info = await rig.waitSettled(id, 600_000);
  const endedAt = Date.now();
  const takeover = firstLineAfter([b], TAKEOVER_LINE, killedAt);
  const stats = rig.sandbox.store.stats;
  console.log(
    JSON.stringify(
      {
        lockMs: Number(values.lock),
        users: total,
        counts: info?.counts,
        created: stats.applied.users.created,
        onServer: rig.sandbox.store.counts().users,
        writeCalls: stats.writes.users.POST + stats.writes.users.PUT,
        refusals: stats.refusals,
        faults: { refused503: stats.faults.failed, dropped: stats.faults.dropped },
        takeoverAfterKillMs: takeover === undefined ? null : takeover - killedAt,
        takeoverLines: b.lines().filter((line) => line.text.includes('taking over')).length,
        finishAfterKillMs: endedAt - killedAt,
        runMs: endedAt - started,
        redisCommands: (await commands()) - before,
      },
      null,
      1,
    ),
  );
} finally {
  await rig.close();
  await node.remove();
}
