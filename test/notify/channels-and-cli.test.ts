/**
 * The channels file is checked at start-up (a bad secret form, a host off the allow-list, an
 * unknown event stop it, naming the channel and field); a chat channel posts the short
 * `{"text": …}` body Slack and Teams take; the CLI lists channels without secrets, sends a test
 * message through the queue (exit 0 delivered, 69 when it failed), lists deliveries and
 * redelivers one with the same webhook-id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { isPorterError } from '../../src/errors/porter-error.js';
import { loadChannels } from '../../src/notify/channels.js';
import { deliver } from '../../src/notify/deliver.js';
import { completeEvent } from '../../src/notify/notify-event.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import {
  channelsDir,
  notifyEnv,
  startReceiver,
  type ChannelsDir,
  type Receiver,
} from './notify-fixture.js';

let dir: ChannelsDir;
let ok: Receiver;
let down: Receiver;
let pipeline: Pipeline;
let env: Record<string, string>;
let secret: string;

beforeAll(async () => {
  dir = await channelsDir();
  ok = await startReceiver();
  down = await startReceiver(() => 'fail');
  const signing = await dir.secret('ops');
  secret = signing.secret;
  const path = await dir.write({
    ops: { kind: 'webhook', url: ok.url, secret: { file: signing.file } },
    broken: { kind: 'webhook', url: down.url, secret: { file: signing.file } },
    chat: { kind: 'chat', url: ok.url, events: ['sync.held'] },
  });
  pipeline = await startPipeline({ env: notifyEnv(path) });
  env = { ...pipeline.childEnv(), ...notifyEnv(path) };
});

afterAll(async () => {
  await pipeline?.close();
  await ok?.close();
  await down?.close();
  await dir?.close();
});

async function refusal(channels: Record<string, unknown>, extra: Record<string, string> = {}) {
  const path = await dir.write(channels, 'refused.json');
  try {
    loadChannels(loadEnv({ PORTER_NOTIFY_FILE: path, ...extra }));
  } catch (error) {
    if (isPorterError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the channels file was accepted');
}

describe('the channels file', () => {
  it('is refused at start-up for a bad secret form, a host off the allow-list, an unknown event', async () => {
    const badSecret = `${dir.dir}/bad.secret`;
    await (await import('node:fs/promises')).writeFile(badSecret, 'not-a-whsec\n');
    expect(
      await refusal({ ops: { kind: 'webhook', url: ok.url, secret: { file: badSecret } } }),
    ).toEqual({
      code: 'PORTER_CONFIG_INVALID',
      message:
        'PORTER_NOTIFY_FILE: ops.secret: not a Standard Webhooks secret (whsec_ then base64)',
    });
    expect(
      await refusal(
        { chat: { kind: 'chat', url: 'https://hooks.slack.com.evil.example/x' } },
        { PORTER_NOTIFY_ALLOWED_HOSTS: 'hooks.slack.com,*.office.com' },
      ),
    ).toMatchObject({
      message: expect.stringContaining(
        'chat.url: host hooks.slack.com.evil.example is not in PORTER_NOTIFY_ALLOWED_HOSTS',
      ),
    });
    expect(
      await refusal({ chat: { kind: 'chat', url: ok.url, events: ['sync.hold'] } }),
    ).toMatchObject({ message: expect.stringContaining('chat.events.0: an event name') });
    expect(
      await refusal({
        mail: { kind: 'email', url: 'http://smtp.example.com', from: 'a@b', to: ['c@d'] },
      }),
    ).toMatchObject({ message: 'PORTER_NOTIFY_FILE: mail.url: an smtp:// or smtps:// URL' });
  });

  it('a chat channel posts a short {"text"} body, unsigned', async () => {
    const channel = pipeline.context.channels.require('chat');
    const event = completeEvent(
      {
        name: 'sync.held',
        title:
          'Sync imp_x on prod is held: it would lock 40 and delete 0, over its threshold of 25',
        target: 'prod',
        ids: { importId: 'imp_x' },
        counts: { locks: 40 },
        why: ['it would lock 40 of 400'],
        action: 'An approver must approve it.',
        page: 'imports/imp_x',
      },
      'https://porter.example.com/',
    );
    const before = ok.requests.length;
    await deliver(channel, event, 'evt_x.chat', { timeoutMs: 2000 });
    const request = ok.requests[before]!;
    expect(request.headers['webhook-signature']).toBeUndefined();
    expect(JSON.parse(request.body)).toEqual({
      text: [
        '*Sync imp_x on prod is held: it would lock 40 and delete 0, over its threshold of 25*',
        'locks 40',
        'it would lock 40 of 400',
        'An approver must approve it.',
        'https://porter.example.com/console/#/imports/imp_x',
      ].join('\n'),
    });
  });
});

describe('porter notify', () => {
  it('lists channels without secrets, tests, lists deliveries and redelivers', async () => {
    const channels = await runPorter(['notify', 'channels'], env);
    expect(channels.code).toBe(0);
    expect(channels.stdout).toMatch(/^ops +webhook http:\/\/127\.0\.0\.1:\d+\/hook +every event$/m);
    // an incoming webhook's path is its secret: only its origin is shown
    expect(channels.stdout).toMatch(/^chat +chat +http:\/\/127\.0\.0\.1:\d+\/… +sync\.held$/m);
    expect(channels.stdout).not.toContain(secret);

    const tested = await runPorter(['notify', 'test', 'ops'], env);
    expect(tested.code).toBe(0);
    const id = /delivered (\S+) to ops/.exec(tested.stdout)![1]!;
    expect(ok.requests.at(-1)!.headers['webhook-id']).toBe(id);

    const failed = await runPorter(['notify', 'test', 'broken'], env);
    expect(failed.code).toBe(69);
    expect(failed.stderr).toContain('PORTER_NOTIFY_FAILED');
    expect(failed.stderr).toContain('HTTP 503');

    const list = await runPorter(['notify', 'deliveries', '--failed'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('broken  notify.test');
    expect(list.stdout).not.toContain(id);

    const before = ok.requests.length;
    const again = await runPorter(['notify', 'redeliver', id], env);
    expect(again.code).toBe(0);
    const { waitFor } = await import('../helpers/redis.js');
    await waitFor(() => (ok.requests.length > before ? true : undefined), {
      what: 'the redelivery',
    });
    expect(ok.requests.at(-1)!.headers['webhook-id']).toBe(id);

    const unknown = await runPorter(['notify', 'test', 'nowhere'], env);
    expect(unknown.code).toBe(66);
  });
});
