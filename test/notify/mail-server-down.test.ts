/**
 * A mail server that is down when the event happens gets the mail once it is back: an import
 * to a target that cannot be reached ends `failed` (nothing sent) and is told as
 * `target.unreachable`; the mail fails while no SMTP server listens, is retried, and arrives
 * once, with the why lines, when the server starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notifyDeliveries } from '../../src/app/notify.js';
import { freePort } from '../../src/util/free-port.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import {
  channelsDir,
  mailHeader,
  mailText,
  notifyEnv,
  startMailServer,
  type ChannelsDir,
  type MailServer,
} from './notify-fixture.js';

let pipeline: Pipeline;
let dir: ChannelsDir;
let mail: MailServer | undefined;
let smtpPort: number;

beforeAll(async () => {
  smtpPort = await freePort();
  const adminPort = await freePort();
  dir = await channelsDir();
  const path = await dir.write({
    'it-ops': {
      kind: 'email',
      url: `smtp://127.0.0.1:${smtpPort}`,
      from: 'porter@example.com',
      to: ['it-ops@example.com'],
      events: ['target.unreachable', 'import.failed'],
    },
  });
  pipeline = await startPipeline({
    env: { ...notifyEnv(path), ADMIN_BASE_URL: `http://127.0.0.1:${adminPort}` },
  });
});

afterAll(async () => {
  await pipeline?.close();
  await mail?.close();
  await dir?.close();
});

describe('a mail server down when the event happens', () => {
  it('gets the mail once it is back, once', async () => {
    const { info } = await pipeline.run(csv(['username', 'email'], [['a.b', 'a@b.example']]), {
      resource: 'users',
      mode: 'upsert',
    });
    expect(info).toMatchObject({ state: 'failed', reasonCode: 'PORTER_TARGET_UNREACHABLE' });
    // the first attempts fail: nothing listens on the mail server's port
    const failing = await waitFor(
      async () => {
        const [delivery] = await notifyDeliveries(pipeline.context);
        return delivery?.lastError !== undefined ? delivery : undefined;
      },
      { what: 'a failed attempt' },
    );
    expect(failing.event).toBe('target.unreachable');
    expect(failing.lastError).toMatch(/^mail to 127\.0\.0\.1 failed: /);

    mail = await startMailServer(smtpPort);
    const delivered = await waitFor(
      async () => {
        const [delivery] = await notifyDeliveries(pipeline.context);
        return delivery?.state === 'delivered' ? delivery : undefined;
      },
      { what: 'the mail after the server started' },
    );
    // the delivery that failed is the one delivered: retried, not queued again
    expect(delivered.id).toBe(failing.id);
    expect(mail.mails).toHaveLength(1);
    const text = mailText(mail.mails[0]!.raw);
    expect(mailHeader(mail.mails[0]!.raw, 'Subject')).toBe(
      `[porter] Target default cannot be reached: import ${info.id} of users failed, nothing was sent`,
    );
    expect(text).toContain('Why:');
    expect(text).toMatch(/cannot reach|connection|ECONNREFUSED/i);
    expect(text).toContain(`porter retry ${info.id}`);
    expect(text).not.toContain('a@b.example');
  });
});
