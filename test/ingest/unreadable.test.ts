import { describe, expect, it } from 'vitest';
import { chunked, ingestError, runIngest } from './ingest-fixture.js';

/** `start`, then 16 MiB of "x" in 1 MiB chunks. */
async function* runaway(start: string): AsyncGenerator<string> {
  yield start;
  for (let mib = 0; mib < 16; mib++) yield 'x'.repeat(1024 * 1024);
}

describe('unreadable uploads', () => {
  it('refuses a CSV with an unclosed quote, naming the row and the line it starts on', async () => {
    const outcome = await runIngest('username,city\nalice,Lyon\nbob,"Nice\ncarol,Paris\n');
    expect(outcome.items.map((item) => item.row)).toEqual([1]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.details).toMatchObject({
      row: 2,
      line: 3,
      csvCode: 'CSV_QUOTE_NOT_CLOSED',
    });
    expect(outcome.error?.message).toMatch(/row 2 .*line 3.*never closed/);
  });

  it('refuses a stray quote inside an unquoted CSV value', async () => {
    const error = await ingestError('username,city\nalice,Ly"on\n');
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.details).toMatchObject({ row: 1, line: 2 });
  });

  it('refuses text after a closing quote', async () => {
    const error = await ingestError('username,city\nalice,"Lyon"x\n');
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.details).toMatchObject({ csvCode: 'CSV_INVALID_CLOSING_QUOTE' });
  });

  it('refuses broken JSON after the records before it', async () => {
    const outcome = await runIngest(
      chunked('[{"username":"a"},{"username":"b"} {"username":"c"}]', 5),
    );
    expect(outcome.items.map((item) => item.row)).toEqual([1, 2]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.details).toMatchObject({ row: 3 });
  });

  it('refuses a truncated JSON array', async () => {
    const error = await ingestError('[{"username":"a"},{"userna');
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(error.message).toMatch(/truncated/);
  });

  it('refuses text after the JSON array', async () => {
    const error = await ingestError('[{"username":"a"}] [{"username":"b"}]');
    expect(error.code).toBe('PORTER_INPUT_UNREADABLE');
  });

  it('refuses a JSON upload that is not an array, suggesting NDJSON for objects', async () => {
    const object = await ingestError('{"username":"a"}', { format: 'json' });
    expect(object.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(object.message).toMatch(/must be one array.*NDJSON/);
    const number = await ingestError('42', { format: 'json' });
    expect(number.code).toBe('PORTER_INPUT_UNREADABLE');
  });

  it('refuses an NDJSON line that is not JSON, naming the line', async () => {
    const outcome = await runIngest('{"username":"a"}\n\n{"username": b}\n{"username":"c"}\n');
    expect(outcome.items.map((item) => item.row)).toEqual([1]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.details).toMatchObject({ row: 2, line: 3 });
    expect(outcome.error?.message).toMatch(/NDJSON line 3/);
  });

  it('reads a runaway CSV quote to the end, then refuses it naming where it opened', async () => {
    // the record is over the size limit long before the end: it is no longer kept, only read
    const outcome = await runIngest(runaway('username,city\nalice,Lyon\nbob,"Nice\n'));
    expect(outcome.items.map((item) => item.row)).toEqual([1]);
    expect(outcome.error?.code).toBe('PORTER_INPUT_UNREADABLE');
    expect(outcome.error?.details).toMatchObject({
      row: 2,
      line: 3,
      csvCode: 'CSV_QUOTE_NOT_CLOSED',
    });
  });
});
