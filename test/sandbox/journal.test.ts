/**
 * The data file's journal: a torn last entry is cut off, compaction folds the journal into the
 * snapshot without changing the state, a compaction cut short is finished at the next start,
 * and a journal that cannot be written answers 500 until a snapshot holds the change.
 */
import {
  appendFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isPorterError } from '../../src/errors/porter-error.js';
import { startSandbox } from '../../src/sandbox/server.js';
import type { SandboxStore } from '../../src/sandbox/store.js';
import type { Logger } from '../../src/util/logger.js';
import { adminFailure, startTestSandbox } from '../helpers/sandbox.js';

function stateOf(store: SandboxStore): unknown {
  return { users: store.users(), groups: store.groups(), acls: store.acls() };
}

/** A logger that keeps what it writes, to see warnings. */
function recordingLogger(): { logger: Logger; text: () => string } {
  let logged = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), text: () => logged };
}

describe('journal', () => {
  let dir: string;
  let dataFile: string;
  let journal: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'porter-journal-'));
    dataFile = join(dir, 'state.ndjson');
    journal = `${dataFile}.journal`;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a torn last entry (a crash mid-append) is cut off with a warning; the entries before it load', async () => {
    const first = await startTestSandbox({ dataFile });
    await first.client.postGroups([{ name: 'Editors' }]);
    await first.client.postUsers([{ username: 'ada', groups: [1] }]);
    const before = stateOf(first.store);
    await first.close();
    const whole = (await stat(journal)).size;
    await appendFile(journal, '{"seq":3,"changes":[{"putUser":{"userId":2,"usern');

    const { logger, text } = recordingLogger();
    const second = await startTestSandbox({ dataFile, logger });
    try {
      expect(stateOf(second.store)).toEqual(before);
      expect(text()).toContain('torn entry');
      expect((await stat(journal)).size).toBe(whole);
      await second.client.postUsers([{ username: 'alan' }]);
    } finally {
      await second.close();
    }
    const third = await startTestSandbox({ dataFile });
    try {
      expect(third.store.users().map((user) => [user.userId, user.username])).toEqual([
        [1, 'ada'],
        [2, 'alan'],
      ]);
    } finally {
      await third.close();
    }
  });

  it('an unreadable entry before the end is no torn tail: start-up stops naming the journal line', async () => {
    await writeFile(
      journal,
      [
        '{"seq":1,"changes":[{"putGroup":{"id":1,"name":"A"}}]}',
        'not json',
        '{"seq":3,"changes":[{"deleteGroup":1}]}',
        '',
      ].join('\n'),
    );
    let failure: unknown;
    try {
      await startSandbox({ port: 0, dataFile });
    } catch (error) {
      failure = error;
    }
    expect(isPorterError(failure) && failure.code).toBe('PORTER_CONFIG_INVALID');
    expect((failure as Error).message).toContain(`${journal}, line 2`);
  });

  it('compaction folds the journal into a new snapshot while writes go on; a restart sees the same state', async () => {
    const first = await startTestSandbox({ dataFile, compactJournalBytes: 1 });
    await first.client.postGroups([{ name: 'A' }, { name: 'B' }]);
    await first.client.putAcls([{ name: 'Read', groupId: 2 }]);
    await Promise.all(
      Array.from({ length: 20 }, (_, lane) =>
        (async () => {
          const [user] = await first.client.postUsers([
            { username: `user${lane}`, groups: [1 + (lane % 2)] },
          ]);
          await first.client.putUsers([{ ...user, city: `City ${lane}`, groups: [1, 2] }]);
          if (lane % 3 === 0) await first.client.deleteUsers([{ userId: user?.userId }]);
        })(),
      ),
    );
    const highest = Math.max(...first.store.users().map((user) => user.userId as number));
    await first.client.deleteUsers([{ userId: highest }]);
    const before = stateOf(first.store);
    await first.close();
    expect(first.store.stats.compactions).toBeGreaterThan(0);

    const files = await readdir(dir);
    expect(files.filter((name) => name !== 'state.ndjson.journal')).toEqual(['state.ndjson']);
    const header = JSON.parse((await readFile(dataFile, 'utf8')).split('\n')[0] ?? '');
    expect(header).toMatchObject({ format: 'porter-sandbox', version: 2 });
    expect(header.journalSeq).toBeGreaterThan(0);

    const second = await startTestSandbox({ dataFile });
    try {
      expect(stateOf(second.store)).toEqual(before);
      const [user] = await second.client.postUsers([{ username: 'after' }]);
      expect(user?.userId).toBe(highest + 1);
    } finally {
      await second.close();
    }
  });

  it('a snapshot keeps the memberships of its moment while writes go on (nothing is copied)', async () => {
    const test = await startTestSandbox({});
    try {
      await test.client.postGroups([{ name: 'A' }, { name: 'B' }]);
      await test.client.postUsers([
        { username: 'ada', groups: [1, 2] },
        { username: 'alan', groups: [2] },
      ]);
      const snapshot = test.store.snapshot();
      await test.client.putUsers([{ userId: 1, username: 'ada', groups: [2] }]);
      await test.client.putGroups([{ id: 2, name: 'B', users: [] }]);
      await test.client.deleteUsers([{ userId: 2 }]);
      await test.client.postUsers([{ username: 'grace', groups: [1] }]);
      expect([1, 2, 3].map((userId) => snapshot.groupsOf(userId))).toEqual([[1, 2], [2], []]);
      expect(snapshot.users.map((user) => user.username)).toEqual(['ada', 'alan']);
      expect(Object.fromEntries(snapshot.members)).toEqual({ 1: [1], 2: [1, 2] });
      snapshot.release();
    } finally {
      await test.close();
    }
  });

  it('a compaction cut short by a crash (segment and temp file left) is finished at the next start', async () => {
    await writeFile(
      dataFile,
      '{"format":"porter-sandbox","version":2,"nextUserId":2,"nextGroupId":1,"journalSeq":1}\n' +
        '{"user":{"userId":1,"username":"one","groups":[]}}\n',
    );
    await writeFile(
      `${journal}.1`,
      '{"seq":1,"changes":[{"putUser":{"userId":1,"username":"one","groups":[]}}]}\n' +
        '{"seq":2,"changes":[{"putUser":{"userId":2,"username":"two","groups":[]}}]}\n',
    );
    await writeFile(
      journal,
      '{"seq":3,"changes":[{"deleteUser":1}]}\n' +
        '{"seq":4,"changes":[{"putUser":{"userId":3,"username":"three","groups":[]}}]}\n',
    );
    await writeFile(`${dataFile}.4242.tmp`, '{"format":"porter-sandbox","vers');

    const first = await startTestSandbox({ dataFile });
    expect(first.store.users().map((user) => user.username)).toEqual(['two', 'three']);
    await first.close();
    expect(first.store.stats.compactions).toBe(1);
    expect(await readdir(dir)).toEqual(['state.ndjson']);

    const second = await startTestSandbox({ dataFile });
    try {
      expect(second.store.users().map((user) => user.username)).toEqual(['two', 'three']);
      const [user] = await second.client.postUsers([{ username: 'four' }]);
      expect(user?.userId).toBe(4);
    } finally {
      await second.close();
    }
  });

  it('a journal that cannot be written answers 500; once it can, a snapshot holds every change', async () => {
    const test = await startTestSandbox({ dataFile, logger: recordingLogger().logger });
    try {
      // A directory where the journal file should be makes every append fail.
      await mkdir(journal);
      const failed = await adminFailure(() => test.client.postUsers([{ username: 'first' }]));
      expect(failed).toMatchObject({ status: 500, errorcode: 'INTERNAL' });
      await adminFailure(() => test.client.postUsers([{ username: 'second' }]));
      await rm(journal, { recursive: true });
      await test.client.postUsers([{ username: 'third' }]);
      expect(test.store.stats.compactions).toBe(1);
    } finally {
      await test.close();
    }
    const second = await startTestSandbox({ dataFile });
    try {
      expect(second.store.users().map((user) => user.username)).toEqual([
        'first',
        'second',
        'third',
      ]);
    } finally {
      await second.close();
    }
  });
});
