/**
 * Work a worker starts on its own acts as its schedule or watched folder: the import records
 * `startedBy: schedule:<name>` or `watch:<dir>`, who added it (`onBehalfOf`) and its audit
 * action, and the trail holds the `import.start` intent and result with that actor.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addImportSchedule,
  findImportSchedule,
  runImportScheduleJob,
} from '../../src/app/import-schedules.js';
import { securityOf } from '../../src/app/security.js';
import { runAs, type Actor } from '../../src/auth/acting.js';
import { checkFourEyes } from '../../src/auth/four-eyes.js';
import type { AuditEvent } from '../../src/audit/audit-event.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { startWatch, tempFolder, USERS_CREATE } from '../watch/watch-fixture.js';

let pipeline: Pipeline;
let folder: { dir: string; remove(): Promise<void> };

function as(name: string): Actor {
  return { principal: { name, role: 'admin', via: 'cli' }, created: [] };
}

beforeAll(async () => {
  pipeline = await startPipeline();
  folder = await tempFolder();
});
afterAll(async () => {
  await pipeline?.close();
  await folder?.remove();
});

async function eventsOf(actionId: string): Promise<AuditEvent[]> {
  const events = await securityOf(pipeline.context).audit.read({ action: 'import.start' });
  return events.filter((event) => event.actionId === actionId).reverse();
}

describe('work a worker starts on its own', () => {
  it('a scheduled import is started by schedule:<name> on behalf of who added it, with its audit events', async () => {
    const { context } = pipeline;
    const file = join(folder.dir, 'feed.csv');
    await writeFile(file, csv(['username', 'email'], [['fed.one', 'fed.one@x']]));
    await runAs(as('cli:ann'), () =>
      addImportSchedule(context, {
        name: 'nightly-feed',
        cron: '0 0 1 1 *',
        request: { file, options: USERS_CREATE },
      }),
    );
    const schedule = await findImportSchedule(context, 'nightly-feed');
    expect(schedule?.addedBy).toBe('cli:ann');
    // what the worker does when the schedule fires: its job's data, with no actor around it
    const run = await runImportScheduleJob(
      context,
      {
        schedule: { name: schedule!.name, addedBy: schedule!.addedBy },
        request: schedule!.request,
      },
      'run-1',
    );
    expect(run.outcome).toBe('imported');
    const info = await pipeline.waitFinal(run.importId!);
    expect(info).toMatchObject({ startedBy: 'schedule:nightly-feed', onBehalfOf: 'cli:ann' });
    expect(info.actionId).toBeDefined();
    const events = await eventsOf(info.actionId!);
    expect(events.map((event) => event.phase)).toEqual(['intent', 'result']);
    for (const event of events) {
      expect(event.who).toMatchObject({
        name: 'schedule:nightly-feed',
        via: 'schedule',
        onBehalfOf: 'cli:ann',
      });
      expect(event.what).toMatchObject({ schedule: 'nightly-feed', file });
    }
    expect(events[1]!.what.created).toEqual([info.id]);
    expect(events[1]!.result).toMatchObject({ ok: true });
  });

  it('a watched folder import is started by watch:<dir> on behalf of who started watching', async () => {
    const running = await runAs(as('cli:bob'), async () => startWatch(pipeline, folder.dir));
    try {
      await writeFile(
        join(folder.dir, 'drop.csv'),
        csv(['username', 'email'], [['dropped.one', 'dropped.one@x']]),
      );
      const moved = await running.moved('drop.csv');
      const info = await pipeline.context.store.get(moved.importId!);
      expect(info).toMatchObject({ startedBy: `watch:${folder.dir}`, onBehalfOf: 'cli:bob' });
      const events = await waitFor(
        async () => {
          const found = await eventsOf(info!.actionId!);
          return found.length === 2 ? found : undefined;
        },
        { what: 'the watch import events' },
      );
      expect(events.map((event) => [event.phase, event.who.name, event.who.onBehalfOf])).toEqual([
        ['intent', `watch:${folder.dir}`, 'cli:bob'],
        ['result', `watch:${folder.dir}`, 'cli:bob'],
      ]);
      expect(events[1]!.what).toMatchObject({ folder: folder.dir, file: 'drop.csv' });
      expect(events[1]!.what.created).toEqual([info!.id]);
      // who set the watch up does not approve what it started either, under any case of the
      // name (the command line's own user never passes four eyes at all)
      const bob: Actor = {
        principal: { name: 'CLI:Bob', role: 'approver', via: 'token' },
        created: [],
      };
      expect(() =>
        runAs(bob, () => checkFourEyes(pipeline.context.targets, { ...info!, state: 'held' })),
      ).toThrow(/started import/);
    } finally {
      await running.stop();
    }
  });
});
