/**
 * `porter watch` in process, against real Redis and a real sandbox: files that settle are
 * imported one at a time in arrival order and moved with their report; growing, hidden and
 * partial files wait; a content already imported is refused with a note; a restart takes
 * the files left waiting.
 */
import { appendFile, mkdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { waitFor } from '../helpers/redis.js';
import { namesIn, startWatch, tempFolder, type RunningWatch } from './watch-fixture.js';

let pipeline: Pipeline;
let folder: { dir: string; remove(): Promise<void> };
let running: RunningWatch | undefined;

beforeAll(async () => {
  pipeline = await startPipeline();
});
afterAll(async () => pipeline?.close());
beforeEach(async () => {
  folder = await tempFolder();
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await folder.remove();
});

function usersCsv(prefix: string, count: number): string {
  return csv(
    ['username', 'email'],
    Array.from({ length: count }, (_, index) => [
      `${prefix}.${index + 1}`,
      `${prefix}.${index + 1}@example.com`,
    ]),
  );
}

function usernames(): string[] {
  return pipeline.sandbox.store.users().map((user) => String(user.username));
}

describe('porter watch', () => {
  it('imports files waiting at start in arrival order (time, then name), moves each to processed/ with its report', async () => {
    const { dir } = folder;
    // b is older than a: arrival order is by time first
    await writeFile(join(dir, 'a.csv'), usersCsv('start-a', 2));
    await writeFile(join(dir, 'b.csv'), usersCsv('start-b', 2));
    await writeFile(join(dir, 'c.csv'), usersCsv('start-c', 1));
    const old = new Date(Date.now() - 60_000);
    await utimes(join(dir, 'b.csv'), old, old);
    await utimes(join(dir, 'c.csv'), old, old);

    running = startWatch(pipeline, dir);
    const moved = await Promise.all(
      ['a.csv', 'b.csv', 'c.csv'].map((name) => running!.moved(name)),
    );
    const order = running.events
      .filter((event) => event.type === 'importing')
      .map((event) => event.name);
    expect(order).toEqual(['b.csv', 'c.csv', 'a.csv']);
    for (const event of moved) {
      expect(event).toMatchObject({ to: 'processed', state: 'completed' });
    }
    expect(await namesIn(dir)).toEqual(['processed']);
    expect(await namesIn(join(dir, 'processed'))).toEqual([
      'a.csv',
      'a.csv.report.csv',
      'b.csv',
      'b.csv.report.csv',
      'c.csv',
      'c.csv.report.csv',
    ]);
    const report = await readFile(join(dir, 'processed', 'b.csv.report.csv'), 'utf8');
    expect(report).toMatch(/start-b\.1/);
    expect(report).toMatch(/succeeded/);
    expect(usernames()).toEqual(expect.arrayContaining(['start-a.1', 'start-b.2', 'start-c.1']));
  });

  it('waits while a file grows and imports it whole once it stops', async () => {
    const { dir } = folder;
    running = startWatch(pipeline, dir, { settleMs: 1_500 });
    const file = join(dir, 'growing.csv');
    await writeFile(file, 'username,email\n');
    await waitFor(() => running!.events.find((event) => event.type === 'waiting'), {
      what: 'the watcher to see the file',
    });
    for (let part = 1; part <= 4; part++) {
      const seen = running.events.length;
      await appendFile(file, `grow.${part},grow.${part}@example.com\n`);
      // the watcher has noticed this part before the next one is written
      await waitFor(
        () =>
          running!.events
            .slice(seen)
            .find((event) => event.type === 'growing' && event.name === 'growing.csv'),
        { what: `part ${part} to be noticed` },
      );
      expect(running.events.some((event) => event.type === 'importing')).toBe(false);
    }
    const moved = await running.moved('growing.csv');
    expect(moved).toMatchObject({ to: 'processed', state: 'completed' });
    const info = await pipeline.context.store.get(moved.importId!);
    expect(info).toMatchObject({ total: 4, counts: { succeeded: 4 } });
  });

  it('refuses a content imported before: moved to failed/ with a note, imported once, even after a restart', async () => {
    const { dir } = folder;
    const content = usersCsv('dup', 3);
    await writeFile(join(dir, 'first.csv'), content);
    running = startWatch(pipeline, dir);
    const first = await running.moved('first.csv');
    expect(first).toMatchObject({ to: 'processed', state: 'completed' });

    await writeFile(join(dir, 'again.csv'), content);
    const again = await running.moved('again.csv');
    expect(again).toMatchObject({ to: 'failed', importId: undefined });
    const note = await readFile(join(dir, 'failed', 'again.csv.note.txt'), 'utf8');
    expect(note).toContain('first.csv');
    expect(note).toContain(first.importId!);

    // a new watcher (a restart) remembers it too: the memory is in Redis
    await running.stop();
    await writeFile(join(dir, 'third.csv'), content);
    running = startWatch(pipeline, dir);
    expect(await running.moved('third.csv')).toMatchObject({ to: 'failed' });
    const imports = (await pipeline.context.store.list()).filter((info) =>
      ['first.csv', 'again.csv', 'third.csv'].includes(info.source ?? ''),
    );
    expect(imports.map((info) => info.source)).toEqual(['first.csv']);
    expect(usernames().filter((name) => name.startsWith('dup.'))).toHaveLength(3);
  });

  it('takes the files that arrived while no watcher ran when it starts again', async () => {
    const { dir } = folder;
    running = startWatch(pipeline, dir);
    await writeFile(join(dir, 'before.csv'), usersCsv('restart-before', 1));
    await running.moved('before.csv');
    await running.stop();
    running = undefined;
    await writeFile(join(dir, 'while-down-1.csv'), usersCsv('restart-down-1', 1));
    await writeFile(join(dir, 'while-down-2.csv'), usersCsv('restart-down-2', 1));
    running = startWatch(pipeline, dir);
    for (const name of ['while-down-1.csv', 'while-down-2.csv']) {
      expect(await running.moved(name)).toMatchObject({ to: 'processed', state: 'completed' });
    }
    expect(usernames()).toEqual(expect.arrayContaining(['restart-down-1.1', 'restart-down-2.1']));
  });

  it('moves an import with failed records to processed/, and one that failed to failed/ with a note and its report', async () => {
    const { dir } = folder;
    await writeFile(
      join(dir, 'some-bad.csv'),
      'username,email\nmixed.1,m1@example.com\n,x@example.com\n',
    );
    await writeFile(join(dir, 'broken.csv'), csv(['username', 'favouriteColour'], [['x', 'blue']]));
    running = startWatch(pipeline, dir);
    expect(await running.moved('some-bad.csv')).toMatchObject({
      to: 'processed',
      state: 'completed_with_errors',
    });
    const broken = await running.moved('broken.csv');
    expect(broken).toMatchObject({ to: 'failed', state: 'failed' });
    expect(await namesIn(join(dir, 'failed'))).toEqual([
      'broken.csv',
      'broken.csv.note.txt',
      'broken.csv.report.csv',
    ]);
    expect(await readFile(join(dir, 'failed', 'broken.csv.note.txt'), 'utf8')).toMatch(
      new RegExp(`import ${broken.importId} ended failed: .*favouriteColour`),
    );
    expect(await readFile(join(dir, 'processed', 'some-bad.csv.report.csv'), 'utf8')).toMatch(
      /failed/,
    );
  });

  it('leaves hidden files, partial names and subdirectories alone, and never follows a symbolic link', async () => {
    const { dir } = folder;
    const outside = await tempFolder();
    try {
      await writeFile(join(outside.dir, 'secret.csv'), usersCsv('outside', 1));
      await symlink(join(outside.dir, 'secret.csv'), join(dir, 'link.csv'));
      await writeFile(join(dir, '.hidden.csv'), usersCsv('hidden', 1));
      await writeFile(join(dir, 'upload.csv.part'), usersCsv('part', 1));
      await writeFile(join(dir, 'upload.tmp'), usersCsv('tmp', 1));
      await mkdir(join(dir, 'nested'));
      await writeFile(join(dir, 'nested', 'inner.csv'), usersCsv('nested', 1));
      await writeFile(join(dir, 'real.csv'), usersCsv('real', 1));
      running = startWatch(pipeline, dir);
      expect(await running.moved('link.csv')).toMatchObject({ to: 'failed' });
      expect(await readFile(join(dir, 'failed', 'link.csv.note.txt'), 'utf8')).toMatch(
        /symbolic link/,
      );
      expect(await running.moved('real.csv')).toMatchObject({ to: 'processed' });
      expect(await namesIn(dir)).toEqual([
        '.hidden.csv',
        'failed',
        'nested',
        'processed',
        'upload.csv.part',
        'upload.tmp',
      ]);
      expect(await namesIn(outside.dir)).toEqual(['secret.csv']);
      const names = usernames();
      for (const prefix of ['outside', 'hidden', 'part', 'tmp', 'nested']) {
        expect(names.some((name) => name.startsWith(`${prefix}.`))).toBe(false);
      }
    } finally {
      await outside.remove();
    }
  });

  it('keeps a second file of the same name: the one moved later gets a free name', async () => {
    const { dir } = folder;
    running = startWatch(pipeline, dir);
    await writeFile(join(dir, 'daily.csv'), usersCsv('daily-1', 1));
    expect(await running.moved('daily.csv')).toMatchObject({ movedAs: 'daily.csv' });
    const count = running.events.length;
    await writeFile(join(dir, 'daily.csv'), usersCsv('daily-2', 1));
    const second = await waitFor(
      () =>
        running!.events
          .slice(count)
          .find((event) => event.type === 'moved' && event.name === 'daily.csv'),
      { timeoutMs: 60_000, what: 'the second daily.csv' },
    );
    expect(second).toMatchObject({ movedAs: 'daily-2.csv', to: 'processed' });
    expect(await namesIn(join(dir, 'processed'))).toEqual([
      'daily-2.csv',
      'daily-2.csv.report.csv',
      'daily.csv',
      'daily.csv.report.csv',
    ]);
  });
});
