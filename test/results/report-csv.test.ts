import { parse } from 'csv-parse/sync';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RecordResult } from '../../src/model/import.js';
import { csvReportLayout, writeCsvReport } from '../../src/results/report-csv.js';
import { failedFirst } from '../../src/results/report-order.js';
import { countingSource, slowWritable } from './slow-writable.js';

const COLUMNS = ['username', 'email', 'groups'];

function user(row: number, overrides: Partial<RecordResult> = {}): RecordResult {
  return {
    row,
    line: row + 1,
    key: `user${row}`,
    action: 'create',
    status: 'succeeded',
    id: 1000 + row,
    attempts: 1,
    input: { username: `user${row}`, email: `user${row}@example.com`, groups: 'staff|it' },
    ...overrides,
  };
}

async function csvOf(results: RecordResult[], columns: string[], inputFirst = false) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const count = await writeCsvReport(results, out, { columns, inputFirst });
  const rows = parse(Buffer.concat(chunks).toString('utf8')) as string[][];
  return { count, header: rows[0], rows: rows.slice(1) };
}

describe('writeCsvReport', () => {
  it('writes report columns, then input columns in upload order, one line per result', async () => {
    const failed = user(2, {
      status: 'failed',
      id: undefined,
      errorCode: 'ALREADY_EXISTS',
      error: 'user "user2" exists,\nnothing changed',
    });
    const { count, header, rows } = await csvOf([user(1), failed, user(3)], COLUMNS);
    expect(count).toBe(3);
    expect(header).toEqual([
      'row',
      'line',
      'sourceRow',
      'key',
      'action',
      'status',
      'id',
      'errorCode',
      'field',
      'error',
      'attempts',
      'changes',
      'username',
      'email',
      'groups',
    ]);
    expect(rows[0]).toEqual([
      '1',
      '2',
      '',
      'user1',
      'create',
      'succeeded',
      '1001',
      '',
      '',
      '',
      '1',
      '',
      'user1',
      'user1@example.com',
      'staff|it',
    ]);
    expect(rows[1].slice(5, 10)).toEqual([
      'failed',
      '',
      'ALREADY_EXISTS',
      '',
      'user "user2" exists,\nnothing changed',
    ]);
    expect(rows.map((row) => row[0])).toEqual(['1', '2', '3']);
  });

  it('writes only the header for no results', async () => {
    const { count, header, rows } = await csvOf([], COLUMNS);
    expect(count).toBe(0);
    expect(header).toHaveLength(15);
    expect(rows).toEqual([]);
  });

  it('prefixes report columns that clash with input columns', () => {
    const layout = csvReportLayout(['id', 'key', '_id', 'name']);
    expect(layout.header).toEqual([
      'row',
      'line',
      'sourceRow',
      '_key',
      'action',
      'status',
      '__id',
      'errorCode',
      'field',
      'error',
      'attempts',
      'changes',
      'id',
      'key',
      '_id',
      'name',
    ]);
  });

  it('puts input columns first and names report columns porter_* when asked', async () => {
    const failed = user(4, {
      status: 'failed',
      errorCode: 'PORTER_ROW_INVALID',
      error: 'email: not an address',
      input: { username: 'user4', email: 'nope', groups: '', porter_status: 'old' },
    });
    const { header, rows } = await csvOf([failed], [...COLUMNS, 'porter_status'], true);
    expect(header).toEqual([
      'username',
      'email',
      'groups',
      'porter_row',
      'porter_line',
      'porter_sourceRow',
      'porter_key',
      'porter_action',
      'porter_status',
      'porter_id',
      'porter_errorCode',
      'porter_field',
      'porter_error',
      'porter_attempts',
      'porter_changes',
    ]);
    expect(rows[0].slice(0, 3)).toEqual(['user4', 'nope', '']);
    expect(rows[0].slice(8)).toEqual([
      'failed',
      '1004',
      'PORTER_ROW_INVALID',
      '',
      'email: not an address',
      '1',
      '',
    ]);
  });

  it('neutralises formulas in every cell: input, error, header', async () => {
    const evil = user(1, {
      key: '=HYPERLINK("http://evil.example","x")',
      status: 'failed',
      error: '@SUM(1+1) is not a username',
      input: {
        username: '=HYPERLINK("http://evil.example","x")',
        email: '-1+2',
        groups: '\tstaff',
        '=cmd': '\r=1+1',
        quota: -5,
      },
    });
    const { header, rows } = await csvOf([evil], [...COLUMNS, '=cmd', 'quota']);
    expect(header.at(-2)).toBe("'=cmd");
    const cells = Object.fromEntries(header.map((name, index) => [name, rows[0][index]]));
    expect(cells.key).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(cells.error).toBe("'@SUM(1+1) is not a username");
    expect(cells.username).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(cells.email).toBe("'-1+2");
    expect(cells.groups).toBe("'\tstaff");
    expect(cells["'=cmd"]).toBe("'\r=1+1");
    expect(cells.quota).toBe("'-5");
  });

  it('writes lists and objects in input cells as JSON', async () => {
    const { rows } = await csvOf(
      [user(1, { input: { username: 'u', email: null, groups: ['a', 'b'] } })],
      COLUMNS,
    );
    expect(rows[0].slice(12)).toEqual(['u', '', '["a","b"]']);
  });

  it('respects backpressure of a slow destination and does not read far ahead', async () => {
    const slow = slowWritable(256);
    const results = Array.from({ length: 5000 }, (_, index) => user(index + 1));
    const { source, pulled } = countingSource(results);
    let maxAhead = 0;
    let linesOut = 0;
    const originalWrite = slow.writable._write.bind(slow.writable);
    slow.writable._write = (chunk: Buffer, encoding, callback) => {
      linesOut += chunk.toString('utf8').split('\n').length - 1;
      maxAhead = Math.max(maxAhead, pulled() - linesOut);
      originalWrite(chunk, encoding, callback);
    };
    const count = await writeCsvReport(source, slow.writable, { columns: COLUMNS });
    expect(count).toBe(5000);
    expect(slow.violations()).toBe(0);
    expect(maxAhead).toBeLessThan(1000);
    expect(parse(slow.text())).toHaveLength(5001);
    expect(slow.writable.writableEnded).toBe(true);
  });

  it('leaves the destination open with end: false', async () => {
    const out = new PassThrough();
    out.resume();
    await writeCsvReport([user(1)], out, { columns: COLUMNS, end: false });
    expect(out.writableEnded).toBe(false);
    out.end();
  });

  it('lists failed records first when read through failedFirst', async () => {
    const all = [
      user(1),
      user(2, { status: 'failed' }),
      user(3),
      user(4, { status: 'unprocessed' }),
    ];
    const read = async function* (status: readonly RecordResult['status'][]) {
      yield* all.filter((result) => status.includes(result.status));
    };
    const { rows } = await csvOf(await toArray(failedFirst(read)), COLUMNS);
    expect(rows.map((row) => row[0])).toEqual(['2', '4', '1', '3']);
  });
});

async function toArray<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
