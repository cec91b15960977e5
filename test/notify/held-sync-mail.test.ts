/**
 * A scheduled sync held over its deletion threshold tells its people once: exactly one mail
 * (received by a real SMTP server) and one signed webhook, however often the schedule fires
 * afterwards on the unchanged file. The mail says what is held (counts, first locks), who must
 * approve, and links to the sync's page in the console.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import {
  addImportSchedule,
  deleteImportSchedule,
  importScheduleRuns,
} from '../../src/app/import-schedules.js';
import { notifyDeliveries } from '../../src/app/notify.js';
import { securityOf } from '../../src/app/security.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import {
  channelsDir,
  mailHeader,
  mailText,
  notifyEnv,
  startMailServer,
  startReceiver,
  type ChannelsDir,
  type MailServer,
  type Receiver,
} from './notify-fixture.js';

const SELF = 'svc.porter';
const PASSWORD = 'notify-test-password-0123456789';
const staff = Array.from({ length: 12 }, (_, index) => `staff${String(index).padStart(2, '0')}`);

let pipeline: Pipeline;
let mail: MailServer;
let receiver: Receiver;
let dir: ChannelsDir;
let secret: string;

beforeAll(async () => {
  mail = await startMailServer();
  receiver = await startReceiver();
  dir = await channelsDir();
  const signing = await dir.secret('incident');
  secret = signing.secret;
  const path = await dir.write({
    'it-ops': {
      kind: 'email',
      url: mail.url,
      from: 'porter@example.com',
      to: ['it-ops@example.com', 'hr-systems@example.com'],
      events: ['sync.held', 'import.failed', 'target.unreachable'],
    },
    incident: {
      kind: 'webhook',
      url: receiver.url,
      secret: { file: signing.file },
      events: ['sync.held'],
    },
  });
  pipeline = await startPipeline({
    sandbox: { user: SELF, password: PASSWORD },
    env: { ADMIN_USER: SELF, ADMIN_PASSWORD: PASSWORD, ...notifyEnv(path) },
  });
  const client = pipeline.context.createAdminClient();
  await client.postUsers(staff.map((username) => ({ username, email: `${username}@x` })));
  await client.close();
});

afterAll(async () => {
  await deleteImportSchedule(pipeline.context, 'nightly').catch(() => {});
  await pipeline?.context.importScheduleQueue.obliterate({ force: true }).catch(() => {});
  await pipeline?.close();
  await mail?.close();
  await receiver?.close();
  await dir?.close();
});

describe('a scheduled sync held over its threshold', () => {
  it('sends exactly one mail and one webhook, with the counts, the first locks, who must approve and the link', async () => {
    const file = join(dir.dir, 'hr-feed.csv');
    await writeFile(
      file,
      csv(
        ['username', 'email'],
        [
          ['staff00', 'staff00@x'],
          ['staff01', 'staff01@x'],
        ],
      ),
    );
    await addImportSchedule(pipeline.context, {
      name: 'nightly',
      cron: '*/1 * * * * *',
      request: {
        file,
        options: {
          resource: 'users',
          mode: 'sync',
          batchSize: 100,
          listSeparator: '|',
          emptyAsClear: false,
          allowAdmin: false,
          sync: { missing: 'lock' },
        },
      },
    });
    await waitFor(
      () => (mail.mails.length > 0 && receiver.requests.length > 0 ? true : undefined),
      {
        what: 'the mail and the webhook',
        timeoutMs: 30_000,
      },
    );
    // the schedule fires again on the unchanged file: no new sync, no new message
    const runs = await waitFor(
      async () => {
        const all = await importScheduleRuns(pipeline.context, 'nightly', 10);
        return all.some((run) => run.outcome === 'unchanged') ? all : undefined;
      },
      { what: 'a later run of the schedule', timeoutMs: 30_000 },
    );
    await deleteImportSchedule(pipeline.context, 'nightly');
    const heldId = runs.find((run) => run.outcome === 'imported')!.importId!;
    await waitFor(
      async () => {
        const deliveries = await notifyDeliveries(pipeline.context);
        return deliveries.length === 2 && deliveries.every((d) => d.state === 'delivered')
          ? true
          : undefined;
      },
      { what: 'both deliveries delivered' },
    );
    expect(mail.mails).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);

    const [message] = mail.mails;
    expect(message!.to).toEqual(['it-ops@example.com', 'hr-systems@example.com']);
    expect(mailHeader(message!.raw, 'Subject')).toBe(
      `[porter] Sync ${heldId} on default is held: it would lock 10 and delete 0, over its threshold of 1`,
    );
    const text = mailText(message!.raw);
    expect(text).toContain(`importId ${heldId} · target default`);
    expect(text).toMatch(/Counts: total 12, .*planned 12.*, locks 10, threshold 1/);
    expect(text).toContain('First: lock staff02, lock staff03');
    expect(text).toContain('Started by schedule:nightly.');
    expect(text).toContain(
      `An approver other than schedule:nightly must approve it (porter approve ${heldId}`,
    );
    expect(text).toContain(`https://porter.example.com/console/#/imports/${heldId}`);
    // no personal data beyond the keys: the users' emails are not in it
    expect(text).not.toContain('@x');

    const request = receiver.requests[0]!;
    const payload = new Webhook(secret).verify(
      request.body,
      request.headers as Record<string, string>,
    );
    expect(payload).toMatchObject({
      type: 'sync.held',
      data: { ids: { importId: heldId }, counts: { locks: 10 }, startedBy: 'schedule:nightly' },
    });

    const audit = await securityOf(pipeline.context).audit.read({ action: 'notify.sync.held' });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.what).toMatchObject({ importId: heldId, channels: ['it-ops', 'incident'] });
  });
});
