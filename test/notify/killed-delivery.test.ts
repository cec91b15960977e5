/**
 * A delivery survives its processes: the API queues a test message, a worker sends it to a
 * receiver that holds the request open, and both processes are killed (SIGKILL) in the middle
 * of that delivery. After a restart the delivery is made again, with the same webhook-id:
 * delivered, never lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { spawnApi, type ApiProcess } from '../helpers/api-process.js';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js';
import { deletePrefix, freshPrefix, testRedisUrl, waitFor } from '../helpers/redis.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import {
  channelsDir,
  notifyEnv,
  startReceiver,
  type ChannelsDir,
  type Receiver,
} from './notify-fixture.js';

const TOKEN = 'notify-kill-test-token-0123456789';
let sandbox: RunningSandbox;
let receiver: Receiver;
let dir: ChannelsDir;
let env: Record<string, string>;
let secret: string;
const children: Array<ApiProcess | WorkerProcess> = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  // the first request is held open until the test ends; the next ones are answered
  receiver = await startReceiver((index) => (index === 0 ? 'hang' : 'ok'));
  dir = await channelsDir();
  const signing = await dir.secret('ops');
  secret = signing.secret;
  const path = await dir.write({
    ops: { kind: 'webhook', url: receiver.url, secret: { file: signing.file } },
  });
  env = {
    REDIS_URL: testRedisUrl(),
    PORTER_PREFIX: freshPrefix('notify-kill'),
    ADMIN_BASE_URL: sandbox.url,
    PORTER_API_TOKEN: TOKEN,
    PORTER_LOCK_DURATION_MS: '1000',
    ...notifyEnv(path, { PORTER_NOTIFY_TIMEOUT_MS: '120000' }),
  };
});

afterAll(async () => {
  for (const child of children) {
    child.child.kill('SIGKILL');
    await child.exited;
  }
  await receiver?.close();
  await sandbox?.close();
  await dir?.close();
  await deletePrefix(testRedisUrl(), env.PORTER_PREFIX!);
});

async function api(
  base: string,
  method: string,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> & { log: string[] } }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown> & { log: string[] },
  };
}

async function kill(child: ApiProcess | WorkerProcess): Promise<void> {
  child.child.kill('SIGKILL');
  expect(await child.exited).toBe('SIGKILL');
}

describe('the API and the worker killed mid-delivery', () => {
  it('delivers after the restart, with the same webhook-id', async () => {
    const firstApi = await spawnApi(env);
    const firstWorker = spawnWorker(env);
    children.push(firstApi, firstWorker);
    const base = await firstApi.listening;
    const queued = await api(base, 'POST', '/v1/notify/channels/ops/test');
    expect(queued.status).toBe(202);
    const id = queued.body.id as string;

    // the worker is sending it: the receiver holds the request
    await waitFor(() => (receiver.requests.length === 1 ? true : undefined), {
      what: 'the first attempt to reach the receiver',
    });
    const during = await api(base, 'GET', `/v1/notify/deliveries/${id}`);
    expect(during.body.state).toBe('sending');
    await Promise.all([kill(firstApi), kill(firstWorker)]);

    const secondApi = await spawnApi(env);
    const secondWorker = spawnWorker(env);
    children.push(secondApi, secondWorker);
    const base2 = await secondApi.listening;
    const delivered = await waitFor(
      async () => {
        const { body } = await api(base2, 'GET', `/v1/notify/deliveries/${id}`);
        // the state and the attempt's log line are two writes: wait for both
        const logged = (body.log as string[] | undefined)?.some((line) =>
          line.includes('delivered (HTTP 200)'),
        );
        return body.state === 'delivered' && logged ? body : undefined;
      },
      { what: 'the delivery after the restart', timeoutMs: 30_000 },
    );
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests.map((request) => request.headers['webhook-id'])).toEqual([id, id]);
    const payload = new Webhook(secret).verify(
      receiver.requests[1]!.body,
      receiver.requests[1]!.headers as Record<string, string>,
    );
    expect(payload).toMatchObject({ type: 'notify.test' });
    expect(delivered.log.filter((line: string) => line.includes('delivered'))).toHaveLength(1);
  });
});
