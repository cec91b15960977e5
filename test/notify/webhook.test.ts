/**
 * Signed webhooks, checked by the Standard Webhooks specification's own library: an import's
 * end is delivered, signed; a receiver that fails three times gets it on the fourth attempt with
 * the same webhook-id; one that hangs is cut off and gets it on the next attempt; a redirect to
 * another host is not followed; each attempt is logged, and the event is in the audit trail.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { securityOf } from '../../src/app/security.js';
import { notifyDeliveries, notifyDelivery } from '../../src/app/notify.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import {
  channelsDir,
  notifyEnv,
  startReceiver,
  type Answer,
  type ChannelsDir,
  type Receiver,
} from './notify-fixture.js';

let pipeline: Pipeline | undefined;
let receivers: Receiver[] = [];
let dir: ChannelsDir | undefined;

afterEach(async () => {
  await pipeline?.close();
  for (const receiver of receivers) await receiver.close();
  await dir?.close();
  pipeline = undefined;
  receivers = [];
});

async function start(
  answer: (index: number) => Answer,
  env: Record<string, string> = {},
): Promise<{ receiver: Receiver; secret: string }> {
  const receiver = await startReceiver(answer);
  receivers.push(receiver);
  dir = await channelsDir();
  const { secret, file } = await dir.secret('ops');
  const path = await dir.write({
    ops: { kind: 'webhook', url: receiver.url, secret: { file }, events: ['import.finished'] },
  });
  pipeline = await startPipeline({ env: notifyEnv(path, env) });
  return { receiver, secret };
}

const FILE = csv(['username', 'email'], [['hook.one', 'one@example.com']]);

function verified(secret: string, request: Receiver['requests'][number]): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

describe('a signed webhook', () => {
  it('fails three times, then is delivered on the fourth attempt with the same webhook-id', async () => {
    const { receiver, secret } = await start((index) => (index < 3 ? 'fail' : 'ok'));
    const { info } = await pipeline!.run(FILE, { resource: 'users', mode: 'upsert' });
    expect(info.state).toBe('completed');

    const [delivery] = await waitFor(
      async () => {
        const list = await notifyDeliveries(pipeline!.context);
        return list[0]?.state === 'delivered' ? list : undefined;
      },
      { what: 'the delivery' },
    );
    expect(receiver.requests).toHaveLength(4);
    const ids = new Set(receiver.requests.map((request) => request.headers['webhook-id']));
    expect(ids).toEqual(new Set([delivery!.id]));
    // every attempt is signed as the specification says, checked by its own library
    for (const request of receiver.requests) {
      expect(verified(secret, request)).toMatchObject({ type: 'import.finished' });
    }
    const payload = JSON.parse(receiver.requests[3]!.body) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(payload.type).toBe('import.finished');
    expect(payload.data).toMatchObject({
      name: 'import.finished',
      target: 'default',
      ids: { importId: info.id },
      counts: { total: 1, succeeded: 1 },
      link: `https://porter.example.com/console/#/imports/${info.id}`,
    });
    expect(delivery).toMatchObject({ channel: 'ops', attempts: 4, event: 'import.finished' });

    const { log } = await notifyDelivery(pipeline!.context, delivery!.id);
    expect(log).toHaveLength(4);
    expect(log.slice(0, 3).every((line) => line.includes('failed: HTTP 503'))).toBe(true);
    expect(log[3]).toContain('delivered (HTTP 200)');

    const audit = await securityOf(pipeline!.context).audit.read({ action: 'notify.' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'notify.import.finished',
      what: { importId: info.id, channels: ['ops'], deliveries: [delivery!.id] },
    });
  });

  it('cuts off a receiver that hangs, and delivers on the next attempt', async () => {
    const { receiver, secret } = await start((index) => (index === 0 ? 'hang' : 'ok'), {
      PORTER_NOTIFY_TIMEOUT_MS: '300',
    });
    const { info } = await pipeline!.run(FILE, { resource: 'users', mode: 'upsert' });
    expect(info.state).toBe('completed');
    const delivered = await waitFor(
      async () => {
        const [delivery] = await notifyDeliveries(pipeline!.context);
        return delivery?.state === 'delivered' ? delivery : undefined;
      },
      { what: 'the delivery after the hang' },
    );
    expect(receiver.requests).toHaveLength(2);
    expect(verified(secret, receiver.requests[1]!)).toMatchObject({ type: 'import.finished' });
    const { log } = await notifyDelivery(pipeline!.context, delivered.id);
    expect(log[0]).toContain('no answer within 300 ms; cut off');
    expect(log[1]).toContain('delivered');
  });

  it('a receiver that hangs never holds an import: the next import runs and ends meanwhile', async () => {
    const { receiver } = await start(() => 'hang', { PORTER_NOTIFY_TIMEOUT_MS: '60000' });
    const first = await pipeline!.run(FILE, { resource: 'users', mode: 'upsert' });
    await waitFor(() => (receiver.requests.length === 1 ? true : undefined), {
      what: 'the first delivery to hang',
    });
    const second = await pipeline!.run(
      csv(['username', 'email'], [['hook.two', 'two@example.com']]),
      { resource: 'users', mode: 'upsert' },
    );
    expect([first.info.state, second.info.state]).toEqual(['completed', 'completed']);
    const [hanging] = await notifyDeliveries(pipeline!.context).then((list) =>
      list.filter((delivery) => delivery.title.includes(first.info.id)),
    );
    expect(hanging?.state).toBe('sending');
  });

  it('does not follow a redirect to another host, and gives the delivery up', async () => {
    const other = await startReceiver();
    receivers.push(other);
    const { receiver } = await start(() => ({
      redirect: other.url.replace('127.0.0.1', 'localhost'),
    }));
    await pipeline!.run(FILE, { resource: 'users', mode: 'upsert' });
    const failed = await waitFor(
      async () => {
        const [delivery] = await notifyDeliveries(pipeline!.context, { failed: true });
        return delivery?.state === 'failed' ? delivery : undefined;
      },
      { what: 'the delivery to fail' },
    );
    expect(failed.attempts).toBe(1);
    expect(failed.lastError).toMatch(/redirects to another host \(localhost:\d+\); not followed/);
    expect(receiver.requests).toHaveLength(1);
    expect(other.requests).toHaveLength(0);
    const audit = await securityOf(pipeline!.context).audit.read({ action: 'notify.failed' });
    expect(audit[0]?.result).toMatchObject({ ok: false, code: 'PORTER_NOTIFY_FAILED' });
  });
});
