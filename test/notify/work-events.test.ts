/**
 * Events of work other than an import's end, each delivered once to the channel that wants it:
 * an API token about to expire, an export that finished, a held sync's plan dropped (cancelled)
 * and another approved; every one is in the audit trail too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startExport } from '../../src/app/exports.js';
import { approveImport, cancelImport } from '../../src/app/imports.js';
import { securityOf } from '../../src/app/security.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { notifyEnv, signedWebhook, type ChannelsDir, type Receiver } from './notify-fixture.js';

const SELF = 'svc.porter';
const PASSWORD = 'notify-work-password-0123456789';
const staff = Array.from({ length: 12 }, (_, index) => `staff${String(index).padStart(2, '0')}`);
const EVENTS = ['token.expiring', 'export.finished', 'plan.dropped', 'plan.approved'];

let pipeline: Pipeline;
let receiver: Receiver;
let dir: ChannelsDir;
let secret: string;

beforeAll(async () => {
  let path: string;
  ({ receiver, dir, secret, path } = await signedWebhook(EVENTS));
  pipeline = await startPipeline({
    workers: false,
    sandbox: { user: SELF, password: PASSWORD },
    env: {
      ADMIN_USER: SELF,
      ADMIN_PASSWORD: PASSWORD,
      PORTER_EXPORT_DIR: dir.dir,
      ...notifyEnv(path),
    },
  });
  const client = pipeline.context.createAdminClient();
  await client.postUsers(staff.map((username) => ({ username, email: `${username}@x` })));
  await client.close();
});

afterAll(async () => {
  await pipeline?.close();
  await receiver?.close();
  await dir?.close();
});

type Message = { type: string; data: { ids: Record<string, string>; title: string } };

function messages(): Message[] {
  return receiver.requests.map(
    (request) =>
      new Webhook(secret).verify(
        request.body,
        request.headers as Record<string, string>,
      ) as Message,
  );
}

const FILE = csv(
  ['username', 'email'],
  [
    ['staff00', 'staff00@x'],
    ['staff01', 'staff01@x'],
  ],
);

describe('events of tokens, exports and plans', () => {
  it('are each delivered once, signed, and audited', async () => {
    const expiring = await securityOf(pipeline.context).tokens.create(
      { name: 'hr-feed', role: 'operator', expiresAt: new Date(Date.now() + 2 * 86_400_000) },
      { at: new Date().toISOString(), actionId: 'make-hr-feed', who: { name: 'test' } },
    );
    // the workers look for expiring tokens when they start
    pipeline.startWorkers();
    const exported = await startExport(pipeline.context, {
      resource: 'users',
      format: 'csv',
      outDir: dir.dir,
    });
    const sync = { resource: 'users', mode: 'sync', sync: { missing: 'lock' } } as const;
    const { info: dropped } = await pipeline.run(FILE, sync);
    expect(dropped.state).toBe('held');
    await cancelImport(pipeline.context, dropped.id);
    const { info: held } = await pipeline.run(FILE, sync);
    const application = await approveImport(pipeline.context, held.id);
    await pipeline.waitFinal(application.id);

    const all = await waitFor(
      () => {
        const got = messages();
        return got.length >= 4 ? got : undefined;
      },
      { what: 'four events' },
    );
    const byType = Object.fromEntries(all.map((message) => [message.type, message.data]));
    expect(all.map((message) => message.type).sort()).toEqual([...EVENTS].sort());
    expect(byType['token.expiring']).toMatchObject({
      ids: { tokenId: expiring.info.id, token: 'hr-feed' },
      title: 'API token hr-feed expires in 2 days',
    });
    expect(byType['export.finished']).toMatchObject({ ids: { exportId: exported.id } });
    expect(byType['export.finished']!.title).toMatch(
      /^Export exp_\S+ of users from default finished: \d+ records$/,
    );
    expect(byType['plan.dropped']).toMatchObject({ ids: { importId: dropped.id } });
    expect(byType['plan.approved']).toMatchObject({
      ids: { importId: held.id, applicationId: application.id },
    });

    // the application's own event is audited once it has ended: waited for, not assumed
    const audit = await waitFor(
      async () => {
        const read = await securityOf(pipeline.context).audit.read({ action: 'notify.' });
        return read.length >= 7 ? read : undefined;
      },
      { what: 'seven audited events' },
    );
    expect(audit.map((event) => event.action).sort()).toEqual(
      [
        'notify.export.finished',
        'notify.import.finished',
        'notify.plan.approved',
        'notify.plan.dropped',
        'notify.sync.held',
        'notify.sync.held',
        'notify.token.expiring',
      ].sort(),
    );
    // the events no channel wants are audited with no channel
    expect(audit.find((event) => event.action === 'notify.sync.held')!.what.channels).toEqual([]);
  });
});
