/**
 * The diff report: `diff.csv` (key, resource, field, a, b; formula-safe cells) and `diff.json`
 * (an array of the same rows), both written as the rows are found, to temporary names renamed
 * when complete.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { formulaSafe } from '../results/formula-safe.js';
import type { DiffRow } from './run-diff.js';

const COLUMNS = ['key', 'resource', 'field', 'a', 'b'] as const;

function csvCell(value: string): string {
  const safe = formulaSafe(value);
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}

export class DiffReport {
  private readonly csvPath: string;
  private readonly jsonPath: string;
  private readonly csv: WriteStream;
  private readonly json: WriteStream;
  rows = 0;

  constructor(private readonly dir: string) {
    this.csvPath = join(dir, '.diff.csv.porter-tmp');
    this.jsonPath = join(dir, '.diff.json.porter-tmp');
    this.csv = createWriteStream(this.csvPath);
    this.json = createWriteStream(this.jsonPath);
    this.csv.write(`${COLUMNS.join(',')}\n`);
    this.json.write('[');
  }

  async add(row: DiffRow): Promise<void> {
    await write(this.csv, `${COLUMNS.map((column) => csvCell(row[column])).join(',')}\n`);
    await write(this.json, `${this.rows === 0 ? '\n' : ',\n'}${JSON.stringify(row)}`);
    this.rows++;
  }

  /** Ends both files and gives them their names; returns their paths. */
  async close(): Promise<string[]> {
    this.json.end(this.rows === 0 ? ']\n' : '\n]\n');
    this.csv.end();
    await Promise.all([finished(this.csv), finished(this.json)]);
    const paths = [join(this.dir, 'diff.csv'), join(this.dir, 'diff.json')];
    await rename(this.csvPath, paths[0]!);
    await rename(this.jsonPath, paths[1]!);
    return paths;
  }
}
