/**
 * A redis-server process started from the binary on a free port in a directory of its own, with
 * append-only persistence when asked, that can be stopped, killed, started again from its files,
 * and set back to an earlier copy of them (a power cut). The pieces the Cluster and Sentinel sets
 * (redis-topology.ts) are built from. No Docker needed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './wait.js';
import { freePort } from '../../src/util/free-port.js';

export { freePort };

export interface Server {
  port: number;
  child: ChildProcess;
}

/** No snapshots and no append-only file: what the Cluster and Sentinel sets run with. */
const NO_PERSISTENCE = ['--save', '', '--appendonly', 'no'];

/** Starts redis-server on the port with its files in `dir`, and resolves once it answers. */
export async function startServer(
  dir: string,
  port: number,
  args: string[],
  persistence: string[] = NO_PERSISTENCE,
): Promise<Server> {
  const child = spawn(
    'redis-server',
    [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...persistence],
    { stdio: 'ignore' },
  );
  await waitFor(() => ping(port), { timeoutMs: 30_000, what: `redis-server on ${port}` });
  return { port, child };
}

/** Whether something on the port answers PING (undefined while it does not). */
export async function ping(port: number): Promise<true | undefined> {
  const redis = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG' ? true : undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

/** One command on a connection of its own. */
export async function command(port: number, ...args: string[]): Promise<unknown> {
  const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  try {
    return await redis.call(args[0]!, ...args.slice(1));
  } finally {
    redis.disconnect();
  }
}

/** Stops the process (SIGTERM: Redis writes out its append-only file and exits). */
export async function stopServer(
  server: Server,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  server.child.kill(signal);
  await exited;
}

/** The append-only files as they were on disk at one moment. */
export interface AppendOnlyCopy {
  path: string;
}

export interface RedisNode {
  port: number;
  url: string;
  /** Stops it cleanly: what it acknowledged is in its files. */
  stop(): Promise<void>;
  /** SIGKILL: with `appendfsync everysec`, up to about a second of writes is lost. */
  kill(): Promise<void>;
  /** Starts it again on the same port from its files. */
  start(): Promise<void>;
  /** Copies the append-only files as they are on disk now. */
  copyAppendOnly(): Promise<AppendOnlyCopy>;
  /** Puts a copy in place of the append-only files; the node must be stopped or killed. */
  restoreAppendOnly(copy: AppendOnlyCopy): Promise<void>;
  /** Stops it and removes its files. */
  remove(): Promise<void>;
}

export interface RedisNodeOptions {
  /** Append-only persistence with this fsync policy; none when unset. */
  appendFsync?: 'always' | 'everysec';
  /** More redis-server arguments: `['--maxmemory', '20mb']`. */
  args?: string[];
}

/** One Redis on a free port, in a temporary directory of its own. */
export async function startRedisNode(options: RedisNodeOptions = {}): Promise<RedisNode> {
  const dir = await mkdtemp(join(tmpdir(), 'porter-redis-'));
  const port = await freePort();
  const persistence = options.appendFsync
    ? [
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        options.appendFsync,
        // no rewrite under way while the files are copied
        '--auto-aof-rewrite-percentage',
        '0',
      ]
    : NO_PERSISTENCE;
  const aofDir = join(dir, 'appendonlydir');
  const args = options.args ?? [];
  let server = await startServer(dir, port, args, persistence);
  let copies = 0;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () => stopServer(server),
    kill: () => stopServer(server, 'SIGKILL'),
    start: async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        throw new Error(`redis-server on ${port} is still running`);
      }
      server = await startServer(dir, port, args, persistence);
    },
    copyAppendOnly: async () => {
      const path = join(dir, `appendonly-copy-${++copies}`);
      await cp(aofDir, path, { recursive: true });
      return { path };
    },
    restoreAppendOnly: async ({ path }) => {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        throw new Error(`redis-server on ${port} is still running`);
      }
      await rm(aofDir, { recursive: true, force: true });
      await cp(path, aofDir, { recursive: true });
    },
    remove: async () => {
      await stopServer(server, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
