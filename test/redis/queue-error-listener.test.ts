/** What a queue's or worker's error listener logs: lost locks once per job and without a stack. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { queueErrorListener } from '../../src/redis/outage-log.js';

function capture(): { lines: Array<Record<string, unknown>>; logger: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, sink) };
}

describe('queueErrorListener', () => {
  it('says a refused end of a job once per job, at warn, without a stack; other errors as before', () => {
    const { lines, logger } = capture();
    const listen = queueErrorListener(logger, 'import worker');
    // a failed renewal is the worker's lockRenewalFailed listener's to tell
    listen(new Error('could not renew lock for job imp_01abc-b3'));
    listen(new Error('Missing lock for job imp_01abc-b3. moveToFinished'));
    listen(new Error('Missing lock for job imp_01abc-b3. moveToFinished'));
    listen(new Error('Lock mismatch for job imp_01abc-b4. Cmd moveToFinished from active'));
    listen(new Error('something else broke'));
    const warn = lines.filter((line) => line.level === 40);
    expect(warn.map((line) => line.msg)).toEqual([
      'import worker: lost the lock of job imp_01abc-b3',
      'import worker: lost the lock of job imp_01abc-b4',
    ]);
    expect(warn.every((line) => line.err === undefined)).toBe(true);
    expect(lines.filter((line) => line.level === 20)).toHaveLength(2);
    const errors = lines.filter((line) => line.level === 50);
    expect(errors.map((line) => line.msg)).toEqual(['import worker error']);
  });
});
