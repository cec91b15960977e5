/**
 * A port already in use is a usage error that names the command's own flags, and the command
 * exits 64 instead of staying up with open connections.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefix, freshPrefix, testRedisUrl } from '../helpers/redis.js';

const prefix = freshPrefix('busy-port');
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  busy = createServer();
  busy.listen(0, '127.0.0.1');
  await once(busy, 'listening');
  busyPort = (busy.address() as AddressInfo).port;
});
afterAll(async () => {
  busy.close();
  await deletePrefix(testRedisUrl(), prefix);
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Runs porter; a process that does not exit on its own is killed and reported as such. */
function porter(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['bin/porter.js', ...args],
      {
        env: {
          ...process.env,
          LOG_LEVEL: 'error',
          REDIS_URL: testRedisUrl(),
          PORTER_PREFIX: prefix,
          PORTER_API_TOKEN: 'busy-port-token-0123456789',
        },
        timeout: 30_000,
        killSignal: 'SIGKILL',
      },
      (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

describe('a busy port', () => {
  it('porter api: exit 64 naming --host or --port, no hang', async () => {
    const result = await porter(['api', '--port', String(busyPort)]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(
      /^porter: API cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\); choose another --host or --port \[PORTER_USAGE\]$/m,
    );
  }, 60_000);

  it('porter dev, sandbox port busy: names --sandbox-port', async () => {
    const result = await porter([
      'dev',
      '--sandbox-port',
      String(busyPort),
      '--api-port',
      String(await freePort()),
    ]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(
      /sandbox cannot listen .*choose another --host or --sandbox-port/,
    );
    expect(result.stderr).not.toMatch(/--port\b/);
  }, 60_000);

  it('porter dev, API port busy: names --api-port and stops what it started', async () => {
    const result = await porter([
      'dev',
      '--sandbox-port',
      String(await freePort()),
      '--api-port',
      String(busyPort),
    ]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/API cannot listen .*choose another --host or --api-port/);
  }, 60_000);
});
