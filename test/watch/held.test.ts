/**
 * An import held for approval is not done: the watcher stops waiting for it and moves its file
 * to failed/ with a note. No worker runs here, so the import stays queued until the test
 * holds it the way a sync's rails do.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportState } from '../../src/model/import.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { startWatch, tempFolder } from './watch-fixture.js';

let pipeline: Pipeline;
let folder: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  folder = await tempFolder();
});
afterAll(async () => {
  await pipeline?.close();
  await folder?.remove();
});

describe('a held import', () => {
  it('moves its file to failed/ with a note saying it waits for approval', async () => {
    await writeFile(join(folder.dir, 'held.csv'), csv(['username'], [['held.one']]));
    const running = startWatch(pipeline, folder.dir);
    try {
      const started = await waitFor(
        () => running.events.find((event) => event.type === 'started'),
        { what: 'the import to start' },
      );
      const importId = started.type === 'started' ? started.importId : '';
      await waitFor(
        async () =>
          (await pipeline.context.store.getState(importId)) === 'queued' ? true : undefined,
        { what: 'the import to be queued' },
      );
      // nothing moves while it is queued: the watcher waits for the import's end
      expect(running.events.some((event) => event.type === 'moved')).toBe(false);
      const held = await pipeline.context.store.transition(
        importId,
        ['queued'],
        'held' as ImportState,
        'would lock 40% of the users',
      );
      expect(held).toBe(true);
      const moved = await running.moved('held.csv');
      expect(moved).toMatchObject({ to: 'failed', importId, state: 'held' });
      expect(await readFile(join(folder.dir, 'failed', 'held.csv.note.txt'), 'utf8')).toMatch(
        new RegExp(`import ${importId} is held for approval: would lock 40% of the users`),
      );
    } finally {
      await running.stop();
    }
  });
});
