/**
 * A real Redis Cluster (3 masters) and a real Sentinel set (a master, a replica, 3 Sentinels),
 * started from the redis-server binary on free ports in a temporary directory, and stopped
 * with their files removed. No Docker needed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command, freePort, ping, startServer, stopServer, type Server } from './redis-node.js';
import { waitFor } from './wait.js';

export { freePort } from './redis-node.js';

/** Whether redis-server and redis-cli are on the PATH. */
export function redisBinariesPresent(): boolean {
  return (
    spawnSync('redis-server', ['--version']).status === 0 &&
    spawnSync('redis-cli', ['--version']).status === 0
  );
}

export interface RedisCluster {
  /** host:port of each node (masters first), for REDIS_CLUSTER_NODES. */
  nodes: string;
  /** The port of each node as started: the masters first, then their replicas. */
  ports: number[];
  /** Kills a node with SIGKILL. */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** Replicas per master. @defaultValue 0 */
  replicas?: number;
}

/** A 3-master Cluster; resolves once every slot is served (and every replica is in sync). */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const replicas = options.replicas ?? 0;
  const dir = await mkdtemp(join(tmpdir(), 'porter-cluster-'));
  const servers: Server[] = [];
  try {
    for (let index = 0; index < 3 * (1 + replicas); index++) {
      const port = await freePort();
      servers.push(
        await startServer(dir, port, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '2000',
        ]),
      );
    }
    const created = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...servers.map((server) => `127.0.0.1:${server.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create: ${created.stdout}`);
    for (const server of servers) {
      await waitFor(
        async () => {
          const info = String(await command(server.port, 'CLUSTER', 'INFO'));
          return info.includes('cluster_state:ok') ? true : undefined;
        },
        { timeoutMs: 20_000, what: 'cluster_state:ok' },
      );
    }
    for (const server of servers) {
      await waitFor(
        async () => {
          const info = String(await command(server.port, 'INFO', 'replication'));
          return info.includes('role:master') || info.includes('master_link_status:up')
            ? true
            : undefined;
        },
        { timeoutMs: 30_000, what: 'the replicas in sync' },
      );
    }
  } catch (error) {
    await Promise.all(servers.map((server) => stopServer(server)));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    nodes: servers.map((server) => `127.0.0.1:${server.port}`).join(','),
    ports: servers.map((server) => server.port),
    kill: async (port) => {
      const server = servers.find((candidate) => candidate.port === port);
      if (server) await stopServer(server, 'SIGKILL');
    },
    stop: async () => {
      await Promise.all(servers.map((server) => stopServer(server)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface SentinelSet {
  /** host:port of each Sentinel, for REDIS_SENTINELS. */
  sentinels: string;
  name: string;
  /** The port of the master now, as the Sentinels see it. */
  masterPort(): Promise<number>;
  /** Asks the Sentinels to fail over, and resolves once they name the new master. */
  failover(): Promise<number>;
  stop(): Promise<void>;
}

/** A master, one replica and three Sentinels (quorum 2) watching them as `porter-test`. */
export async function startSentinelSet(): Promise<SentinelSet> {
  const dir = await mkdtemp(join(tmpdir(), 'porter-sentinel-'));
  const name = 'porter-test';
  const servers: Server[] = [];
  try {
    const master = await startServer(dir, await freePort(), []);
    servers.push(master);
    const replica = await startServer(dir, await freePort(), [
      '--replicaof',
      '127.0.0.1',
      String(master.port),
    ]);
    servers.push(replica);
    await waitFor(
      async () => {
        const info = String(await command(replica.port, 'INFO', 'replication'));
        return info.includes('master_link_status:up') ? true : undefined;
      },
      { timeoutMs: 20_000, what: 'the replica in sync' },
    );
    for (let index = 0; index < 3; index++) {
      const port = await freePort();
      const file = join(dir, `sentinel-${port}.conf`);
      await writeFile(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const child = spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' });
      await waitFor(() => ping(port), { timeoutMs: 10_000, what: `sentinel on ${port}` });
      servers.push({ port, child });
    }
  } catch (error) {
    await Promise.all(servers.map((server) => stopServer(server)));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const sentinelPorts = servers.slice(2).map((server) => server.port);
  const masterPort = async (): Promise<number> => {
    const reply = (await command(
      sentinelPorts[0]!,
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      name,
    )) as [string, string];
    return Number(reply[1]);
  };
  // every Sentinel knows the replica before a failover is asked for
  await waitFor(
    async () => {
      for (const port of sentinelPorts) {
        const replicas = (await command(port, 'SENTINEL', 'REPLICAS', name)) as unknown[];
        if (replicas.length === 0) return undefined;
      }
      return true;
    },
    { timeoutMs: 30_000, what: 'the Sentinels to find the replica' },
  );
  return {
    sentinels: sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
    name,
    masterPort,
    failover: async () => {
      const before = await masterPort();
      await command(sentinelPorts[0]!, 'SENTINEL', 'FAILOVER', name);
      return waitFor(
        async () => {
          const now = await masterPort();
          if (now === before) return undefined;
          const role = String(await command(now, 'ROLE'));
          return role.startsWith('master') ? now : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the failover' },
      );
    },
    stop: async () => {
      await Promise.all(servers.map((server) => stopServer(server)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
