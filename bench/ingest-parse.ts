/**
 * Ingest throughput and memory: generates an upload of users on the fly (never a file, never
 * whole in memory), pipes it through `ingest` and prints rows/s with peak RSS and heap. Memory
 * must stay flat: the samples at 10 %, 50 % and 100 % should be close. The event loop's delay
 * while parsing is printed too: ingest works in slices, so it stays a few milliseconds.
 *
 *   npx tsx bench/ingest-parse.ts [--rows 1000000] [--format csv|ndjson|json] [--generate-only]
 *                                 [--one-chunk]
 *   npx tsx bench/ingest-parse.ts --shape blank|short [--mb 1]
 *
 * `--generate-only` times the generator alone, to tell its share from the ingest's;
 * `--one-chunk` hands ingest the whole upload as one buffer (an upload held in memory).
 * `--shape blank` is a CSV header followed by `--mb` MiB of blank lines; `--shape short` the
 * same size of one-cell rows under a 12-column header (each an invalid record): both once cost
 * an exception per line.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { isPorterError } from '../src/errors/porter-error.js';
import { ingest, type InputFormat } from '../src/ingest/index.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    format: { type: 'string', default: 'csv' },
    'generate-only': { type: 'boolean', default: false },
    'one-chunk': { type: 'boolean', default: false },
    shape: { type: 'string', default: 'users' },
    mb: { type: 'string', default: '1' },
  },
});
const shape = values.shape as 'users' | 'blank' | 'short';
const shapeLine = shape === 'blank' ? '\n' : 'x\n';
const rows =
  shape === 'users'
    ? Number(values.rows)
    : Math.floor((Number(values.mb) * 1024 * 1024) / shapeLine.length);
const format = (values.shape === 'users' ? values.format : 'csv') as InputFormat;

const COLUMNS = [
  'username',
  'firstName',
  'lastName',
  'email',
  'dept',
  'position',
  'city',
  'country',
  'phone',
  'type',
  'status',
  'groups',
];
const FIRST = ['Zoë', 'Liam', 'Amélie', 'Noah', 'Jürgen', 'Maya', 'Sven', 'Chloé'];
const LAST = ['Martin', 'Müller', 'García', 'Rossi', 'Nowak', 'Dubois', 'Smith', "O'Neil"];
const CITIES = ['Lyon', 'Zürich', 'São Paulo', 'Kraków', 'Lille, Nord'];

function user(index: number): string[] {
  const first = FIRST[index % FIRST.length];
  const last = LAST[index % LAST.length];
  return [
    `user${index}`,
    first,
    last,
    `user${index}@example.com`,
    index % 3 === 0 ? 'Sales' : 'Engineering',
    'Associate',
    CITIES[index % CITIES.length],
    'FR',
    `+33 1 ${String(index % 100_000_000).padStart(8, '0')}`,
    'General User',
    'Active',
    index % 2 === 0 ? 'Staff|Sales' : `Staff|${index % 500}`,
  ];
}

function csvCell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function line(index: number): string {
  if (shape !== 'users') return shapeLine;
  const cells = user(index);
  if (format === 'csv') return `${cells.map(csvCell).join(',')}\n`;
  const record = Object.fromEntries(COLUMNS.map((column, at) => [column, cells[at]]));
  const json = JSON.stringify(record);
  if (format === 'ndjson') return `${json}\n`;
  return `${index === 0 ? '' : ','}${json}`;
}

/** The upload in chunks of about 64 KiB, produced only when the consumer asks for more. */
async function* upload(): AsyncGenerator<Buffer> {
  if (format === 'csv') yield Buffer.from(`${COLUMNS.join(',')}\n`);
  if (format === 'json') yield Buffer.from('[');
  let chunk = '';
  for (let index = 0; index < rows; index++) {
    chunk += line(index);
    if (chunk.length >= 64 * 1024) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (format === 'json') chunk += ']';
  if (chunk.length > 0) yield Buffer.from(chunk);
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
let peakRss = 0;
let peakHeap = 0;
function sample(): { rss: number; heap: number } {
  const { rss, heapUsed } = process.memoryUsage();
  peakRss = Math.max(peakRss, rss);
  peakHeap = Math.max(peakHeap, heapUsed);
  return { rss, heap: heapUsed };
}

if (values['generate-only']) {
  const started = performance.now();
  let bytes = 0;
  for await (const chunk of upload()) bytes += chunk.length;
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `generator alone: ${rows.toLocaleString('en')} ${format} rows, ${mib(bytes)} in ${seconds.toFixed(2)} s = ` +
      `${Math.round(rows / seconds).toLocaleString('en')} rows/s`,
  );
  process.exit(0);
}

// --one-chunk: the whole upload in memory first, handed to ingest as one chunk
let whole: Buffer | undefined;
if (values['one-chunk']) {
  const chunks: Buffer[] = [];
  for await (const chunk of upload()) chunks.push(chunk);
  whole = Buffer.concat(chunks);
}
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
// CPU time between two turns of the loop: ingest's own stretches, whatever the machine's load
let longestCpuMs = 0;
let lastCpu = process.cpuUsage();
let watching = true;
const watchCpu = (): void => {
  const used = process.cpuUsage(lastCpu);
  longestCpuMs = Math.max(longestCpuMs, (used.user + used.system) / 1000);
  lastCpu = process.cpuUsage();
  if (watching) setImmediate(watchCpu);
};
setImmediate(watchCpu);
const checkpoints = new Set([Math.floor(rows / 10), Math.floor(rows / 2)]);
const started = performance.now();
let valid = 0;
let invalid = 0;
let count = 0;
const { items } = ingest(whole ?? Readable.from(upload()), {
  resource: 'users',
  mode: 'upsert',
  format,
});
let ended = 'end of upload';
try {
  for await (const item of items) {
    if (item.kind === 'record') valid++;
    else invalid++;
    count++;
    if ((count & 0x3fff) === 0) sample();
    if (checkpoints.has(count)) {
      const now = sample();
      console.log(
        `at ${count.toLocaleString('en')} rows: rss ${mib(now.rss)}, heap used ${mib(now.heap)}`,
      );
    }
  }
} catch (error) {
  // a file of blank lines ends PORTER_INPUT_EMPTY: the figure is the time it took to say so
  ended = isPorterError(error) ? error.code : String(error);
}
const seconds = (performance.now() - started) / 1000;
// one more turn, so a parse that never gave the loop one is measured too
await new Promise((resolve) => setImmediate(resolve));
loopDelay.disable();
watching = false;
const end = sample();
console.log(
  `at ${count.toLocaleString('en')} rows: rss ${mib(end.rss)}, heap used ${mib(end.heap)}`,
);
console.log(
  `${format} ${shape}: ${count.toLocaleString('en')} rows (${valid} valid, ${invalid} invalid, ${ended}) in ${seconds.toFixed(2)} s = ` +
    `${Math.round(count / seconds).toLocaleString('en')} rows/s; peak rss ${mib(peakRss)}, peak heap used ${mib(peakHeap)}`,
);
console.log(
  `event-loop delay while parsing (${loopDelay.count} samples): max ${(loopDelay.max / 1e6).toFixed(1)} ms, ` +
    `p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms; ` +
    `most CPU time between two turns ${longestCpuMs.toFixed(1)} ms`,
);
