/**
 * A scheduled import's run that missed its time (no worker ran then) is told as
 * `schedule.missed` when it runs late; a run that could start no import (its file is gone) as
 * `schedule.failed`, with the why.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { SCHEDULED_IMPORT_JOB_NAME } from '../../src/queue/import-schedules.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { notifyEnv, signedWebhook, type ChannelsDir, type Receiver } from './notify-fixture.js';

let pipeline: Pipeline;
let receiver: Receiver;
let dir: ChannelsDir;
let secret: string;

beforeAll(async () => {
  let path: string;
  ({ receiver, dir, secret, path } = await signedWebhook(['schedule.missed', 'schedule.failed']));
  pipeline = await startPipeline({ env: notifyEnv(path) });
});

afterAll(async () => {
  await pipeline?.context.importScheduleQueue.obliterate({ force: true }).catch(() => {});
  await pipeline?.close();
  await receiver?.close();
  await dir?.close();
});

describe('a scheduled run', () => {
  it('that runs an hour late is told as missed; one whose file is gone as failed', async () => {
    const due = Date.now() - 3_600_000;
    // the job its scheduler made for a time no worker was running at
    await pipeline.context.importScheduleQueue.add(
      SCHEDULED_IMPORT_JOB_NAME,
      {
        schedule: { name: 'latecomer', addedBy: 'token:hr-admin' },
        request: {
          file: join(dir.dir, 'no-such-feed.csv'),
          options: {
            resource: 'users',
            mode: 'upsert',
            batchSize: 100,
            listSeparator: '|',
            emptyAsClear: false,
            allowAdmin: false,
          },
        },
      },
      { jobId: `repeat:latecomer:${due}` },
    );
    await waitFor(() => (receiver.requests.length >= 2 ? true : undefined), {
      what: 'two events',
    });
    const byType = Object.fromEntries(
      receiver.requests.map((request) => {
        const message = new Webhook(secret).verify(
          request.body,
          request.headers as Record<string, string>,
        ) as { type: string; data: Record<string, unknown> };
        return [message.type, message.data];
      }),
    );
    expect(Object.keys(byType).sort()).toEqual(['schedule.failed', 'schedule.missed']);
    expect(byType['schedule.missed']).toMatchObject({
      ids: { schedule: 'latecomer', jobId: `repeat:latecomer:${due}` },
      title: `Scheduled import latecomer missed its time (${new Date(due).toISOString()}); it runs now`,
    });
    expect(byType['schedule.failed']).toMatchObject({
      ids: { schedule: 'latecomer' },
      startedBy: 'schedule:latecomer',
      onBehalfOf: 'token:hr-admin',
      why: [expect.stringContaining('no-such-feed.csv')],
    });
  });
});
