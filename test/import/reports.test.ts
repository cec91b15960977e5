import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReport } from '../../src/app/imports.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let importId: string;
beforeAll(async () => {
  pipeline = await startPipeline();
  const upload = csv(
    ['username', 'firstName', 'lastName'],
    [
      ['=HYPERLINK("http://evil.example","click")', 'Eve', 'Formula'],
      ['plain.person', '+SUM(1,2)', '-Minus'],
      ['', 'No', 'Username'],
      ['@at.sign', 'At', 'Sign'],
    ],
  );
  const { info } = await pipeline.run(upload, { resource: 'users', mode: 'create' });
  importId = info.id;
});
afterAll(async () => {
  await pipeline?.close();
});

async function report(options: Parameters<typeof writeReport>[3]): Promise<string> {
  const out = new PassThrough();
  const done = text(out);
  await writeReport(pipeline.context, importId, out, options);
  out.end();
  return done;
}

describe('reports', () => {
  it('CSV: one row per record in input order, and no cell can run as a spreadsheet formula', async () => {
    const body = await report({ format: 'csv' });
    const rows = parse(body, { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => row.row)).toEqual(['1', '2', '3', '4']);
    expect(rows.map((row) => row.status)).toEqual([
      'succeeded',
      'succeeded',
      'failed',
      'succeeded',
    ]);
    for (const row of rows) {
      for (const cell of Object.values(row)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    }
    expect(rows[0]!.username).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(rows[1]!.firstName).toBe(`'+SUM(1,2)`);
    expect(rows[2]!.error).toMatch(/username/);
  });

  it('JSON: a valid array with every result', async () => {
    const results = JSON.parse(await report({ format: 'json' })) as {
      row: number;
      status: string;
      input: object;
    }[];
    expect(results.map((r) => r.row)).toEqual([1, 2, 3, 4]);
    expect(results[2]).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_ROW_INVALID',
      field: 'username',
    });
    expect(results[0]!.input).toEqual({
      username: '=HYPERLINK("http://evil.example","click")',
      firstName: 'Eve',
      lastName: 'Formula',
    });
  });

  it('a failed-only report lists input columns first and can be fixed and uploaded again', async () => {
    const body = await report({ format: 'csv', status: ['failed', 'unprocessed'] });
    const header = body.split('\n')[0]!.split(',');
    expect(header.slice(0, 3)).toEqual(['username', 'firstName', 'lastName']);
    expect(header.slice(3).every((name) => name.startsWith('porter_'))).toBe(true);
    const fixed = body.replace('\n,No,Username', '\nfixed.user,No,Username');
    const retried = await pipeline.run(fixed, { resource: 'users', mode: 'create' });
    expect(retried.info.state).toBe('completed');
    expect(retried.results).toHaveLength(1);
    expect(
      (await pipeline.context.createAdminClient().listUsers({ username: 'fixed.user' }))[0],
    ).toMatchObject({
      firstName: 'No',
      lastName: 'Username',
    });
  });
});

describe('re-uploading a fixed report', () => {
  it('removes the quote the report put before formula-like cells', async () => {
    const body = [
      'username,firstName,porter_row,porter_status,porter_error',
      `reupload.person,'-dash-name,3,failed,"field ""username"": missing"`,
    ].join('\n');
    const { results } = await pipeline.run(body, { resource: 'users', mode: 'create' });
    expect(results[0]).toMatchObject({ status: 'succeeded' });
    const [person] = await pipeline.context
      .createAdminClient()
      .listUsers({ username: 'reupload.person' });
    expect(person?.firstName).toBe('-dash-name');
  });

  it.each(['json', 'ndjson'] as const)(
    "a %s upload: the CSV report shows every record's keys, not only the first record's",
    async (format) => {
      const records = [
        { username: `first.${format}`, email: 'first@x' },
        { username: `second.${format}`, firstName: 'Second' },
        { username: `third.${format}`, email: 'bad', position: 'Clerk' },
      ];
      const upload =
        format === 'json'
          ? JSON.stringify(records)
          : records.map((record) => JSON.stringify(record)).join('\n');
      const { info } = await pipeline.run(
        upload,
        { resource: 'users', mode: 'upsert' },
        { format },
      );
      const out = new PassThrough();
      const done = text(out);
      await writeReport(pipeline.context, info.id, out, { format: 'csv' });
      out.end();
      const rows = parse(await done, { columns: true }) as Record<string, string>[];
      expect(Object.keys(rows[0]!)).toEqual(
        expect.arrayContaining(['username', 'email', 'firstName', 'position']),
      );
      expect(rows.map((row) => [row.username, row.email, row.firstName, row.position])).toEqual([
        [`first.${format}`, 'first@x', '', ''],
        [`second.${format}`, '', 'Second', ''],
        [`third.${format}`, 'bad', '', 'Clerk'],
      ]);
    },
  );
});
