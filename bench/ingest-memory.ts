/**
 * Producer memory on a big upload: writes a generated upload to a temporary file (never
 * committed), runs `porter import FILE` in a child process (the producer only: it parses and
 * stages, no worker sends anything) and prints the child's peak RSS, as GNU time measures it.
 *
 *   npx tsx bench/ingest-memory.ts [--mb 200] [--format json|ndjson|csv] [--shape users|huge]
 *
 * `--shape huge` writes records of 7 MB each (a long `dept` value) instead of ordinary users.
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own key prefix, removed
 * afterwards.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { deleteKeysWithPrefix } from '../src/util/redis.js';

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '200' },
    format: { type: 'string', default: 'json' },
    shape: { type: 'string', default: 'users' },
  },
});
const targetBytes = Number(values.mb) * 1024 * 1024;
const format = values.format as 'json' | 'ndjson' | 'csv';
const shape = values.shape as 'users' | 'huge';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `porter-bench-memory-${process.pid}`;

function user(index: number): Record<string, string> {
  return {
    username: `bench.user${index}`,
    firstName: `First${index}`,
    lastName: `Last${index}`,
    email: `user${index}@example.com`,
    dept: shape === 'huge' ? 'x'.repeat(7 * 1024 * 1024) : `Dept ${index % 40}`,
  };
}

function encode(index: number): string {
  const record = user(index);
  if (format === 'csv') {
    const header = index === 0 ? `${Object.keys(record).join(',')}\n` : '';
    return `${header}${Object.values(record).join(',')}\n`;
  }
  const json = JSON.stringify(record);
  if (format === 'ndjson') return `${json}\n`;
  return `${index === 0 ? '[' : ','}\n${json}`;
}

async function writeUpload(file: string): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  let index = 0;
  while (written < targetBytes) {
    const text = encode(index++);
    written += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  }
  if (format === 'json') out.write('\n]\n');
  out.end();
  await once(out, 'finish');
  return index;
}

const dir = await mkdtemp(join(tmpdir(), 'porter-bench-memory-'));
try {
  const file = join(dir, `upload.${format}`);
  const records = await writeUpload(file);
  const size = (await stat(file)).size;
  const started = performance.now();
  // GNU time reports the child's peak RSS exactly, even a peak just before it exits
  const producer = spawn(
    '/usr/bin/time',
    [
      '-f',
      'peak-rss-kb %M',
      'node',
      'bin/porter.js',
      'import',
      file,
      '--resource',
      'users',
      '--mode',
      'upsert',
    ],
    {
      env: { ...process.env, REDIS_URL: redisUrl, PORTER_PREFIX: prefix, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  producer.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(producer, 'exit')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  const match = /peak-rss-kb (\d+)/.exec(stderr);
  const peak = match ? Number(match[1]) / 1024 : Number.NaN;
  process.stderr.write(stderr.replace(/peak-rss-kb \d+\n?/, ''));
  console.log(
    `${format} (${shape}): ${records.toLocaleString('en')} records, ${(size / 1024 / 1024).toFixed(0)} MiB; ` +
      `porter import exited ${code} after ${seconds.toFixed(1)} s; producer peak RSS ${peak.toFixed(0)} MiB`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await deleteKeysWithPrefix(redisUrl, prefix);
}
