import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RecordResult } from '../../src/model/import.js';
import { writeJsonReport } from '../../src/results/report-json.js';
import { countingSource, slowWritable } from './slow-writable.js';

function user(row: number): RecordResult {
  return {
    row,
    status: row % 3 === 0 ? 'failed' : 'succeeded',
    key: `user${row}`,
    error: row % 3 === 0 ? 'quote " and\nnewline' : undefined,
    input: { username: `user${row}`, groups: ['a', 'b'] },
  };
}

async function jsonOf(results: RecordResult[]): Promise<{ count: number; text: string }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const count = await writeJsonReport(results, out);
  return { count, text: Buffer.concat(chunks).toString('utf8') };
}

describe('writeJsonReport', () => {
  it('writes valid JSON when there are no results', async () => {
    const { count, text } = await jsonOf([]);
    expect(count).toBe(0);
    expect(JSON.parse(text)).toEqual([]);
  });

  it('writes one array element per result, in order, parseable back', async () => {
    const results = [user(1), user(2), user(3)];
    const { count, text } = await jsonOf(results);
    expect(count).toBe(3);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(results)));
  });

  it('streams a large report to a slow destination without breaking backpressure', async () => {
    const results = Array.from({ length: 20_000 }, (_, index) => user(index + 1));
    const { source, pulled } = countingSource(results);
    const slow = slowWritable(1024);
    let maxAhead = 0;
    let elementsOut = 0;
    const originalWrite = slow.writable._write.bind(slow.writable);
    slow.writable._write = (chunk: Buffer, encoding, callback) => {
      // elements are separated by newlines; newlines inside strings are escaped
      elementsOut += chunk.toString('utf8').split('\n').length - 1;
      maxAhead = Math.max(maxAhead, pulled() - elementsOut);
      originalWrite(chunk, encoding, callback);
    };
    const count = await writeJsonReport(source, slow.writable);
    expect(count).toBe(20_000);
    expect(slow.violations()).toBe(0);
    expect(maxAhead).toBeLessThan(5000);
    const parsed = JSON.parse(slow.text()) as RecordResult[];
    expect(parsed.map((item) => item.row)).toEqual(results.map((item) => item.row));
  });
});
