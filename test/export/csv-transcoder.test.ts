/**
 * The CSV the export writes straight from an answer's bytes is byte for byte what the general
 * way writes (split the array, check each record, make it portable, csvLine), with the same
 * warnings and the same refusals, whatever the answer holds and wherever its chunks are cut:
 * escapes, formulas, commas, invalid UTF-8, unknown and misplaced keys, wrong types, groups
 * whose names need care, blanks between tokens.
 */
import { describe, expect, it } from 'vitest';
import { recordDecoder } from '../../src/admin/answer-decoder.js';
import type { ResourceName } from '../../src/admin/resources.js';
import { csvAnswerDecoder, csvTranscodePlan } from '../../src/export/csv-answer.js';
import { CsvTranscoder } from '../../src/export/csv-transcoder.js';
import { csvSource, csvTranscodedSource, CSV_LIST_SEPARATOR } from '../../src/export/csv-writer.js';
import { toPortable, type PortableOptions } from '../../src/export/portable-record.js';
import { seededRandom } from '../../src/sandbox/ids.js';

const info = { method: 'GET', path: '/wf/restapi/v2/admin/userManager' };

const GROUP_NAMES = new Map<number, string>([
  [1, 'Editors'],
  [2, 'Viewers'],
  [3, '=HYPERLINK("x")'],
  [4, 'a|b'],
  [5, ' spaced'],
  [6, '12'],
  [7, 'x,y'],
  [8, 'Équipe'],
  [9, 'q"t'],
  [10, '+plus'],
  [11, 'A group whose name is much longer than its id so that lines outgrow the JSON'],
]);

const TEXTS = [
  'Ada',
  '',
  'a,b',
  '=1+1',
  '=a,b',
  "'=x",
  '@é,',
  '-x',
  '+y',
  '@z',
  "'q",
  'é',
  '😀',
  'tab\there',
  'q"t',
];
const TEXTS_MORE = ['line\nbreak', 'back\\slash', 'pipe|d', 'Zoë', '   '];

interface Built {
  bytes: Buffer;
  /** How many elements the array holds. */
  count: number;
}

/** A JSON array of users (or ACLs) made of random, often hostile, records. */
function buildAnswer(
  resource: ResourceName,
  random: () => number,
  count: number,
  /** No record the answer schema refuses (hostile in every other way). */
  clean = false,
): Built {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const text = (): string => (random() < 0.8 ? pick(TEXTS) : pick(TEXTS_MORE));
  const elements: string[] = [];
  for (let index = 0; index < count; index++) {
    const record: Record<string, unknown> =
      resource === 'users'
        ? {
            userId: index + 1,
            username: `user${index}`,
            firstName: text(),
            lastName: text(),
            email: `u${index}@example.com`,
            type: random() < 0.2 ? null : 'General User',
            status: 'Active',
            primaryGroup: 1,
            groups: Array.from({ length: Math.floor(random() * 3) }, () =>
              random() < 0.85 ? 1 + Math.floor(random() * 2) : Math.floor(random() * 12),
            ),
            substitutionMap: random() < 0.7 ? {} : { key: text() },
          }
        : {
            id: `acl-${index}`,
            name: text() || 'n',
            hidden: random() < 0.5,
            groupId: random() < 0.85 ? 1 + Math.floor(random() * 2) : Math.floor(random() * 12),
            revokedPermissions: random() < 0.5 ? [] : [text(), text()],
            searchFilter: random() < 0.5 ? null : text(),
          };
    // clean: no missing id, no text where a number goes (nor the reverse)
    const drawn = random();
    const roll = clean && drawn >= 0.03 && drawn < 0.07 ? 0.5 : drawn;
    if (roll < 0.03) record.extra = 'not in the spec';
    else if (roll < 0.05) record[resource === 'users' ? 'userId' : 'id'] = undefined;
    else if (roll < 0.07) record[resource === 'users' ? 'firstName' : 'name'] = 42;
    else if (roll < 0.08) record[resource === 'users' ? 'primaryGroup' : 'groupId'] = -3;
    let json = JSON.stringify(record, null, roll > 0.95 ? 1 : undefined);
    // clean: no leading zero, no id past 2^53
    const picked = random();
    const shape = clean && picked >= 0.06 && picked < 0.07 ? 0.5 : picked;
    if (shape < 0.02) json = json.replace('"username"', '"__proto__":1,"username"');
    else if (shape < 0.04) json = json.replace(/^\{/, '{"status":"x",');
    else if (shape < 0.05) json = json.replace('"primaryGroup":1', '"primaryGroup":1.0');
    else if (shape < 0.06) json = json.replace('"primaryGroup":1', '"primaryGroup":1e0');
    else if (shape < 0.07) json = json.replace(/"userId":(\d+)/, '"userId":0$1');
    else if (shape < 0.08) json = json.replace('"status":"Active"', '"status":"Act\\u0069ve"');
    else if (shape < 0.09) json = json.replace('"status":"Active"', '"status":"BADUTF8"');
    else if (shape < 0.1 && !clean) json = '{"userId":9007199254740993,"username":"big"}';
    elements.push(json);
  }
  const separator = random() < 0.5 ? ',' : ' ,\n ';
  let bytes = Buffer.from(`[${elements.join(separator)}]`, 'utf8');
  // invalid UTF-8: a lone continuation byte and a cut two-byte sequence
  const marker = Buffer.from('BADUTF8');
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker)) {
    bytes = Buffer.concat([
      bytes.subarray(0, at),
      Buffer.from([0x41, 0x80, 0xc3]),
      bytes.subarray(at + marker.length),
    ]);
  }
  return { bytes, count };
}

/** The bytes cut at random places, some cuts one byte apart. */
function chunksOf(bytes: Buffer, random: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = random() < 0.2 ? 1 + Math.floor(random() * 3) : 1 + Math.floor(random() * 400);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

interface Written {
  csv: string;
  /** Records the transcoder wrote itself (not handed back). */
  quick?: number;
  warnings: string[];
  failed: boolean;
}

function portableOptions(warnings: string[]): PortableOptions {
  return {
    groupName: (id) => GROUP_NAMES.get(id),
    listSeparator: CSV_LIST_SEPARATOR,
    warn: (message) => warnings.push(message),
  };
}

async function collect(parts: AsyncIterable<string | Buffer>, written: Written): Promise<void> {
  try {
    for await (const part of parts) written.csv += part.toString();
  } catch {
    written.failed = true;
  }
}

/** The general way: split, check, make portable, csvLine. */
async function generalCsv(resource: ResourceName, chunks: Buffer[]): Promise<Written> {
  const written: Written = { csv: '', warnings: [], failed: false };
  const options = portableOptions(written.warnings);
  async function* batches() {
    const decoder = recordDecoder(resource, info);
    for (const chunk of chunks) {
      const decoded = decoder.write(chunk);
      if (decoded.value) {
        yield decoded.value.map(
          (record) => toPortable(resource, record, options) as Record<string, unknown>,
        );
      }
      if (decoded.fault) throw decoded.fault;
    }
    decoder.end();
  }
  await collect(
    csvSource(resource, batches(), (message) => written.warnings.push(message)),
    written,
  );
  return written;
}

/** The transcoder's way, as the export runs it. */
async function transcodedCsv(resource: ResourceName, chunks: Buffer[]): Promise<Written> {
  const written: Written = { csv: '', warnings: [], failed: false };
  const options = portableOptions(written.warnings);
  const plan = csvTranscodePlan(resource, (id) => GROUP_NAMES.get(id))!;
  async function* parts() {
    const decoder = csvAnswerDecoder(resource, info, plan);
    for (const chunk of chunks) {
      const decoded = decoder.write(chunk);
      if (decoded.value) {
        const handedBack = decoded.value.parts.filter((part) => !Buffer.isBuffer(part)).length;
        written.quick = (written.quick ?? 0) + decoded.value.records - handedBack;
        yield decoded.value.parts.map((part) =>
          Buffer.isBuffer(part)
            ? part
            : (toPortable(resource, part, options) as Record<string, unknown>),
        );
      }
      if (decoded.fault) throw decoded.fault;
    }
    decoder.end();
  }
  const source = csvTranscodedSource(resource, parts(), (message) =>
    written.warnings.push(message),
  );
  await collect(source, written);
  return written;
}

describe('CSV straight from the answer', () => {
  for (const resource of ['users', 'acls'] as const) {
    it(`${resource}: the same bytes, warnings and refusals as the general way, 400 random answers`, async () => {
      const random = seededRandom(resource === 'users' ? 11 : 12);
      let compared = 0;
      let refused = 0;
      let quick = 0;
      let records = 0;
      for (let round = 0; round < 400; round++) {
        const { bytes, count } = buildAnswer(resource, random, 1 + Math.floor(random() * 12));
        const chunks = chunksOf(bytes, random);
        const general = await generalCsv(resource, chunks);
        const transcoded = await transcodedCsv(resource, chunks);
        expect(transcoded.failed, bytes.toString()).toBe(general.failed);
        if (general.failed) {
          refused++;
          continue;
        }
        expect(transcoded.csv, bytes.toString()).toBe(general.csv);
        expect(transcoded.warnings).toEqual(general.warnings);
        compared++;
        quick += transcoded.quick ?? 0;
        records += count;
      }
      // both kinds of answer were met, and most records took the quick way
      expect(compared).toBeGreaterThan(50);
      expect(refused).toBeGreaterThan(20);
      expect(quick / records).toBeGreaterThan(0.3);
    });
  }

  it('keeps every line when they fill several slabs, chunks of any size', async () => {
    const random = seededRandom(13);
    const { bytes } = buildAnswer('users', random, 30_000, true);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length;) {
      const size = 1 + Math.floor(random() * 300_000);
      chunks.push(bytes.subarray(at, at + size));
      at += size;
    }
    const general = await generalCsv('users', chunks);
    const transcoded = await transcodedCsv('users', chunks);
    expect(transcoded.failed).toBe(general.failed);
    expect(transcoded.csv.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(transcoded.csv === general.csv).toBe(true);
  });

  it('keeps every line when the lines of a chunk outgrow its JSON (long group names)', async () => {
    const random = seededRandom(14);
    const users = Array.from({ length: 3_000 }, (_, index) =>
      JSON.stringify({
        userId: index + 1,
        username: `u${index}`,
        groups: Array.from({ length: 1 + Math.floor(random() * 12) }, () => 11),
      }),
    );
    const bytes = Buffer.from(`[${users.join(',')}]`);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length;) {
      const size = 1 + Math.floor(random() * 20_000);
      chunks.push(bytes.subarray(at, at + size));
      at += size;
    }
    const general = await generalCsv('users', chunks);
    const transcoded = await transcodedCsv('users', chunks);
    expect(general.failed).toBe(false);
    expect(transcoded.csv.length).toBeGreaterThan(4 * bytes.length);
    expect(transcoded.csv === general.csv).toBe(true);
    expect(transcoded.quick).toBe(3_000);
  });

  it('writes plain records itself and hands back only the ones that need the general way', () => {
    const plan = csvTranscodePlan('users', (id) => GROUP_NAMES.get(id))!;
    const transcoder = new CsvTranscoder(plan);
    const answer = JSON.stringify([
      { userId: 1, username: 'ada', groups: [1, 2], substitutionMap: {} },
      { userId: 2, username: '=cmd', groups: [] },
      { userId: 3, username: 'b\\s' },
      { userId: 4, username: 'x', groups: [4] },
      { userId: 5, username: 'a,b', type: null },
    ]);
    const { parts, records } = transcoder.write(Buffer.from(answer));
    transcoder.end();
    // the separator in group 4's name is warned of by the general way
    expect(records).toBe(4);
    const handedBack = parts.filter((part) => !Buffer.isBuffer(part));
    expect(handedBack).toEqual([{ element: { userId: 4, username: 'x', groups: [4] } }]);
    const text = parts
      .map((part) => (Buffer.isBuffer(part) ? part.toString() : '<general>'))
      .join('');
    const empty = (count: number): string => ','.repeat(count);
    expect(text.split('\n')[0]).toBe(`1,ada${empty(18)},Editors|Viewers,{},`);
    expect(text.split('\n')[1]).toBe(`2,'=cmd${empty(21)}`);
    expect(text).toContain('\n3,b\\s,');
    expect(text).toContain('<general>5,"a,b",');
  });

  it('refuses an answer that ends before its array closes, and one with bytes after it', () => {
    const plan = csvTranscodePlan('users', (id) => GROUP_NAMES.get(id))!;
    const cut = new CsvTranscoder(plan);
    cut.write(Buffer.from('[{"userId":1,"username":"a"},{"userId":2'));
    expect(() => cut.end()).toThrow(/ended before its array closed/);
    const trailing = new CsvTranscoder(plan);
    expect(() => trailing.write(Buffer.from('[{"userId":1,"username":"a"}] x'))).toThrow(
      /unexpected "x"/,
    );
  });

  it('carries an element across many chunks and reads each byte of it once', () => {
    const plan = csvTranscodePlan('users', (id) => GROUP_NAMES.get(id))!;
    const transcoder = new CsvTranscoder(plan);
    const long = 'x'.repeat(100_000);
    const bytes = Buffer.from(JSON.stringify([{ userId: 1, username: long, groups: [1] }]));
    let text = '';
    for (let at = 0; at < bytes.length; at += 1000) {
      for (const part of transcoder.write(bytes.subarray(at, at + 1000)).parts) {
        text += Buffer.isBuffer(part) ? part.toString() : '<general>';
      }
    }
    transcoder.end();
    expect(text).toBe(`1,${long}${','.repeat(18)},Editors,,\n`);
  });
});
