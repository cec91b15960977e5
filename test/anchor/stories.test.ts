/**
 * The HR stories with an anchor (examples/hr), end to end by the CLI against a sandbox: an email
 * change, a rename, a leaver and a rehire never make a second account; a sync locks by anchor.
 * porter's Redis is a redis-server of this file's own, so FLUSHALL loses only porter's state.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';
import { runPorter } from '../helpers/porter-cli.js';
import { freePort, startServer, type Server } from '../helpers/redis-node.js';

const MAPPING = 'examples/hr/mapping.json';
const HEADER = [
  'Employee ID',
  'Given Name',
  'Family Name',
  'Employee Email',
  'Dept Code',
  'Job Title',
  'Employment Status',
  'Worker Type',
  'Start Date',
  'Office',
];
type Person = [string, string, string, string, string, string];
/** id, given, family, email, department, status */
const row = ([id, given, family, email, dept, status]: Person): string[] => [
  id,
  given,
  family,
  email,
  dept,
  'Staff member',
  status,
  'Employee',
  '3/1/2027',
  'Zürich',
];

let dir: string;
let redis: Server;
let pipeline: Pipeline;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-anchor-'));
  redis = await startServer(dir, await freePort(), []);
  pipeline = await startPipeline({ redisUrl: `redis://127.0.0.1:${redis.port}` });
  await pipeline.run(csv(['name'], [['Staff'], ['Marketing'], ['Engineering'], ['Sales']]), {
    resource: 'groups',
    mode: 'create',
  });
  // an account made by hand before porter: joined once, by email
  await pipeline.run(
    csv(['username', 'email', 'groups'], [['jmuller', 'jose.muller@acme.example', 'Marketing']]),
    { resource: 'users', mode: 'create' },
  );
}, 60_000);
afterAll(async () => {
  await pipeline?.close();
  redis?.child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

async function feed(name: string, people: Person[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, csv(HEADER, people.map(row)));
  return path;
}

interface ReportRow {
  key?: string;
  action?: string;
  status: string;
  id?: number;
  error?: string;
}

/** Runs a porter command that ends with an import; gives its exit, output and report. */
async function porter(args: string[]): Promise<{ code: number; out: string; rows: ReportRow[] }> {
  const reportPath = join(dir, `report-${Math.random().toString(36).slice(2)}.csv`);
  const result = await runPorter(
    [...args, '--map', MAPPING, '--report', reportPath],
    pipeline.childEnv(),
  );
  const text = await readFile(reportPath, 'utf8');
  if (process.env.PORTER_SHOW_PLANS) process.stdout.write(`$ porter ${args.join(' ')}\n${text}\n`);
  const rows = (parse(text, { columns: true }) as Record<string, string>[]).map((one) => ({
    key: one.key || undefined,
    action: one.action || undefined,
    status: one.status!,
    id: one.id ? Number(one.id) : undefined,
    error: one.error || undefined,
  }));
  return { code: result.code, out: result.stdout + result.stderr, rows };
}

async function users(): Promise<Map<string, Record<string, unknown>>> {
  const client = pipeline.context.createAdminClient();
  try {
    const all = (await client.listUsers()) as Record<string, unknown>[];
    return new Map(all.map((user) => [String(user.username), user]));
  } finally {
    await client.close();
  }
}

const day1: Person[] = [
  ['E1001', 'José', 'Müller', 'Jose.Muller@acme.example', 'MKT-04', 'Active'],
  ['E1002', 'Maria', 'García', 'Maria.Garcia@acme.example', 'ENG-01', 'Active'],
  ['E1004', 'Sven', 'Nowak', 'Sven.Nowak@acme.example', 'ENG-01', 'Terminated'],
  ['E1006', 'Amélie', 'Rossi', 'Amelie.Rossi@acme.example', 'SLS-02', 'Active'],
  ['E1007', 'Anne Marie', "O'Neil", 'AnneMarie.ONeil@acme.example', 'SLS-02', 'Active'],
];

describe('a person is recognised by the anchor', () => {
  it('first run: joins the hand-made account once (adopt), skips a leaver with no account', async () => {
    const path = await feed('day1.csv', day1);
    const args = ['import', path, '--resource', 'users', '--mode', 'upsert', '--wait'];
    const plan = await porter([...args, '--dry-run']);
    expect(plan.rows.map((one) => [one.key, one.action, one.status])).toEqual([
      ['jmuller', 'adopt', 'planned'],
      ['mgarcia', 'create', 'planned'],
      [undefined, undefined, 'skipped'],
      ['arossi', 'create', 'planned'],
      ['aoneil', 'create', 'planned'],
    ]);
    expect(plan.rows[2]!.error).toMatch(
      /status Locked and no account on the DAM holds anchor E1004/,
    );
    const before = (await users()).get('jmuller')!;
    const done = await porter(args);
    expect(done.code).toBe(0);
    const after = await users();
    expect(after.get('jmuller')).toMatchObject({
      userId: before.userId,
      substitutionMap: { porterAnchor: 'E1001' },
    });
    expect(after.has('snowak')).toBe(false);
    expect(after.get('aoneil')).toMatchObject({ substitutionMap: { porterAnchor: 'E1007' } });
  });

  it('an email change keeps the account and its name; $unique is stable', async () => {
    const changed = day1.map((person): Person =>
      person[0] === 'E1001'
        ? ['E1001', 'José', 'Müller', 'Jose.Mueller@acme.example', 'MKT-04', 'Active']
        : person,
    );
    const path = await feed('email.csv', changed);
    const before = await users();
    const done = await porter([
      'import',
      path,
      '--resource',
      'users',
      '--mode',
      'upsert',
      '--wait',
    ]);
    expect(done.rows.map((one) => [one.key, one.action])).toEqual([
      ['jmuller', 'update'],
      ['mgarcia', 'unchanged'],
      [undefined, undefined],
      ['arossi', 'unchanged'],
      ['aoneil', 'unchanged'],
    ]);
    const after = await users();
    expect(after.size).toBe(before.size);
    expect(after.get('jmuller')).toMatchObject({
      userId: before.get('jmuller')!.userId,
      email: 'jose.mueller@acme.example',
    });
  });

  it('a sync: one renamed in place (same userId, groups kept), one leaver locked', async () => {
    const before = await users();
    const rossi = before.get('arossi')!;
    const married: Person[] = [
      ['E1001', 'José', 'Müller', 'Jose.Mueller@acme.example', 'MKT-04', 'Active'],
      ['E1002', 'Maria', 'García', 'Maria.Garcia@acme.example', 'ENG-01', 'Active'],
      ['E1006', 'Amélie', 'Bianchi', 'Amelie.Bianchi@acme.example', 'SLS-02', 'Active'],
    ];
    const path = await feed('sync.csv', married);
    const args = ['sync', path, '--resource', 'users', '--max-deletes', '5'];
    const plan = await porter([...args, '--dry-run']);
    expect(plan.rows.map((one) => [one.key, one.action, one.status])).toEqual([
      ['jmuller', 'unchanged', 'planned'],
      ['mgarcia', 'unchanged', 'planned'],
      ['abianchi', 'rename', 'planned'],
      ['aoneil', 'lock', 'planned'],
    ]);
    const done = await porter(args);
    expect(done.code).toBe(0);
    const after = await users();
    expect(after.has('arossi')).toBe(false);
    expect(after.get('abianchi')).toMatchObject({
      userId: rossi.userId,
      groups: rossi.groups,
      email: 'amelie.bianchi@acme.example',
      status: 'Active',
    });
    expect(after.get('aoneil')).toMatchObject({ status: 'Locked' });
  });

  it("a rehire gets their account back (reactivate), even after porter's Redis is flushed", async () => {
    const client = new Redis(redis.port, '127.0.0.1');
    try {
      // this Redis is the file's own: nothing but porter's state is lost
      await client.flushall();
    } finally {
      client.disconnect();
    }
    const before = (await users()).get('aoneil')!;
    const path = await feed('rehire.csv', [
      ['E1007', 'Anne Marie', "O'Neil", 'AnneMarie.ONeil@acme.example', 'MKT-04', 'Active'],
      ['E1006', 'Amélie', 'Bianchi', 'Amelie.Bianchi@acme.example', 'SLS-02', 'Active'],
    ]);
    const args = ['import', path, '--resource', 'users', '--mode', 'upsert', '--wait'];
    const plan = await porter([...args, '--dry-run']);
    expect(plan.rows.map((one) => [one.key, one.action])).toEqual([
      ['aoneil', 'reactivate'],
      ['abianchi', 'unchanged'],
    ]);
    await porter(args);
    const after = (await users()).get('aoneil')!;
    expect(after).toMatchObject({ userId: before.userId, status: 'Active' });
    expect(after.groups).not.toEqual(before.groups);
  });
});
