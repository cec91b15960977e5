/**
 * What mapping expressions cost an upload: the same generated HR export received (parsed,
 * mapped, checked and staged in Redis, as the producer does; no worker runs) once with a plain
 * rename mapping and once with ten expressions computing the same fields and more. Prints rows/s
 * of each and their ratio; the aim is at most 1.5 × the rename's time.
 *
 *   npx tsx bench/mapping-expressions.ts [--rows 200000] [--runs 3] [--slow]
 *
 * `--slow` adds an eleventh expression the synchronous evaluator does not handle (an object
 * constructor), to show what JSONata's own evaluator costs per record.
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own key prefix, removed
 * at the end.
 */
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { loadMapping, type Mapping } from '../src/ingest/index.js';
import { submitImport } from '../src/imports/submit-import.js';
import { ImportStore } from '../src/results/import-store.js';
import { UploadKeys } from '../src/results/import-runtime.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    runs: { type: 'string', default: '3' },
    slow: { type: 'boolean', default: false },
  },
});
const rows = Number(values.rows);
const runs = Number(values.runs);

const HEADER = [
  'Employee ID',
  'Given Name',
  'Family Name',
  'Employee Email',
  'Dept Code',
  'Job Title',
  'Employment Status',
  'Worker Type',
  'Office',
  'Country',
];
const FIRST = ['Zoë', 'Liam', 'Amélie', 'Noah', 'Jürgen', 'Maya', 'Sven', 'Chloé'];
const LAST = ['Martin', 'Müller', 'García', 'Rossi', 'Nowak', 'Dubois', 'Smith', 'Lee'];
const DEPTS = ['MKT-04', 'ENG-01', 'SLS-02'];

function line(index: number): string {
  return `${[
    `E${index}`,
    FIRST[index % FIRST.length],
    LAST[index % LAST.length],
    `User${index}@Acme.example`,
    DEPTS[index % DEPTS.length],
    'Associate',
    index % 50 === 0 ? 'Terminated' : 'Active',
    'Employee',
    'Lyon',
    'FR',
  ].join(',')}\n`;
}

async function* upload(): AsyncGenerator<Buffer> {
  yield Buffer.from(`${HEADER.join(',')}\n`);
  let chunk = '';
  for (let index = 0; index < rows; index++) {
    chunk += line(index);
    if (chunk.length >= 64 * 1024) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk.length > 0) yield Buffer.from(chunk);
}

const RENAME = loadMapping(
  {
    columns: {
      'Employee ID': 'username',
      'Given Name': 'firstName',
      'Family Name': 'lastName',
      'Employee Email': 'email',
      'Dept Code': 'dept',
      'Job Title': 'position',
      'Employment Status': 'status',
      Office: 'city',
      Country: 'country',
    },
    ignore: ['Worker Type'],
  },
  'users',
);

const TEN = loadMapping(
  {
    when: "`Worker Type` != 'Contractor'",
    fields: {
      username: '$lowercase(`Employee ID`)',
      firstName: '$trim(`Given Name`)',
      lastName: '$trim(`Family Name`)',
      email: '$lowercase(`Employee Email`)',
      dept: "$table('names', `Dept Code`)",
      groups: "$table('departments', `Dept Code`)",
      position: '`Job Title`',
      status: "`Employment Status` = 'Terminated' ? 'Locked' : 'Active'",
      city: '$uppercase(Office)',
      company: "$normalizeDiacritics(`Given Name` & ' ' & `Family Name`)",
      ...(values.slow ? { substitutionMap: "{'id': `Employee ID`}" } : {}),
    },
    tables: {
      departments: {
        values: { 'MKT-04': ['Marketing', 'Staff'], 'ENG-01': ['Engineering', 'Staff'] },
        default: ['Staff'],
      },
      names: { values: { 'MKT-04': 'Marketing', 'ENG-01': 'Engineering', 'SLS-02': 'Sales' } },
    },
  },
  'users',
);

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = new Redis(redisUrl, { enableAutoPipelining: true });
const prefix = `bench-mapping-${process.pid}`;
const store = new ImportStore({ redis, prefix, ttlSeconds: 600 });
const keys = new UploadKeys(redis, prefix);

async function receive(mapping: Mapping): Promise<number> {
  const started = performance.now();
  const info = await submitImport(
    {
      options: {
        resource: 'users',
        mode: 'upsert',
        batchSize: 100,
        listSeparator: '|',
        emptyAsClear: false,
        allowAdmin: false,
        allowLookalike: true,
        mapping,
      },
      source: Readable.from(upload()),
      fileName: 'hr.csv',
    },
    { store, keys, enqueuePrepare: async () => {} },
  );
  const seconds = (performance.now() - started) / 1000;
  if (info.counts.failed > 0 || info.total !== rows) {
    throw new Error(`unexpected: ${info.total} rows, ${info.counts.failed} failed`);
  }
  await keys.release(info.id);
  return seconds;
}

async function clean(): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (found.length > 0) await redis.unlink(...found);
  } while (cursor !== '0');
}

try {
  const best = { rename: Infinity, expressions: Infinity };
  for (let run = 0; run < runs; run++) {
    best.rename = Math.min(best.rename, await receive(RENAME));
    await clean();
    best.expressions = Math.min(best.expressions, await receive(TEN));
    await clean();
  }
  const rate = (seconds: number): string =>
    `${Math.round(rows / seconds).toLocaleString('en')} rows/s`;
  const count = Object.keys(TEN.fields ?? {}).length + 1;
  console.log(`${rows.toLocaleString('en')} rows received and staged, best of ${runs} runs:`);
  console.log(`  plain rename mapping:   ${best.rename.toFixed(2)} s = ${rate(best.rename)}`);
  console.log(
    `  ${count} expressions:        ${best.expressions.toFixed(2)} s = ${rate(best.expressions)}`,
  );
  console.log(`  ratio: ${(best.expressions / best.rename).toFixed(2)} × the rename's time`);
} finally {
  await clean();
  redis.disconnect();
}
