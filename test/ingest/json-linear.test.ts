/**
 * The strict JSON reader reads a record in one pass, whatever its strings hold. Each record
 * here is read in a child process with a deadline: a reader that searched the rest of the text
 * again at each escape (or at each string) needs hours for it, one pass under a second, so the
 * deadline is generous and says only "ends" or "never", not how fast.
 */
import { describe, expect, it } from 'vitest';
import { runBounded } from '../helpers/bounded-child.js';

const PROBE = 'test/ingest/json-linear-probe.ts';
const DEADLINE_MS = 45_000;

async function read(which: string): Promise<Record<string, unknown>> {
  const answer = await runBounded(PROBE, [which], DEADLINE_MS);
  expect(answer.stderr).toBe('');
  expect(answer.finished, `the ${which} record was still being read after the deadline`).toBe(true);
  return JSON.parse(answer.stdout) as Record<string, unknown>;
}

describe('the strict JSON reader is linear', () => {
  it('reads a string of eight million escapes (16 MiB)', async () => {
    const read_ = await read('escapes');
    expect(read_.length).toBe(read_.expected);
  });

  it('reads 300,000 strings before the one escape', async () => {
    const read_ = await read('strings');
    expect(read_).toMatchObject({ length: read_.expected, last: 'a"b' });
  });

  it.each(['json', 'ndjson'])(
    'reads such a record in an upload (%s) to the end',
    async (format) => {
      const read_ = await read(format);
      expect(read_).toMatchObject({ length: read_.expected, items: 1 });
    },
  );
});
