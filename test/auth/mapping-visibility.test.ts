/**
 * What a mapping brought in (its tables' values) is shown over HTTP to the roles that may start
 * an import with a mapping, not to viewers: the import, the list of imports and a schedule.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { Role } from '../../src/auth/roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { loadMapping } from '../../src/ingest/index.js';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
let app: FastifyInstance;
const tokens: Partial<Record<Role, string>> = {};
let importId: string;

const mapping = loadMapping(
  {
    fields: { groups: "$table('departments', Dept)" },
    tables: { departments: { values: { SEC: 'secret-group-name', MKT: 'Marketing' } } },
  },
  'users',
);

beforeAll(async () => {
  pipeline = await startPipeline();
  app = await buildApiApp({ context: pipeline.context, token: 'visibility-api-token-0123456789' });
  for (const role of ['viewer', 'operator'] as const) {
    const created = await securityOf(pipeline.context).tokens.create(
      { name: `the-${role}`, role },
      { at: new Date().toISOString(), actionId: role, who: { name: 'test' } },
    );
    tokens[role] = created.token;
  }
  const info = await pipeline.submit(
    csv(['username', 'Dept'], [['ann', 'MKT']]),
    { resource: 'users', mode: 'upsert', dryRun: true },
    { mapping },
  );
  importId = info.id;
  await pipeline.waitFinal(importId);
});
afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

async function get(role: Role, url: string): Promise<unknown> {
  const response = await app.inject({
    method: 'GET',
    url,
    headers: { authorization: `Bearer ${tokens[role]!}` },
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

type WithOptions = { id: string; options: { mapping: { tables: Record<string, unknown> } } };

describe("a mapping's tables over HTTP", () => {
  it('a viewer sees each table by name and size, not its values', async () => {
    const one = (await get('viewer', `/v1/imports/${importId}`)) as WithOptions;
    const listed = ((await get('viewer', '/v1/imports')) as WithOptions[]).find(
      (item) => item.id === importId,
    )!;
    for (const info of [one, listed]) {
      expect(info.options.mapping.tables).toEqual({
        departments: {
          keys: 2,
          withheld: "the table's values are shown to the operator role and above",
        },
      });
      expect(JSON.stringify(info)).not.toContain('secret-group-name');
      // the expressions still explain the report
      expect(info.options.mapping).toMatchObject({
        fields: { groups: "$table('departments', Dept)" },
      });
    }
  });

  it('an operator sees the values', async () => {
    const one = (await get('operator', `/v1/imports/${importId}`)) as WithOptions;
    expect(one.options.mapping.tables).toEqual({
      departments: { values: { SEC: 'secret-group-name', MKT: 'Marketing' } },
    });
  });
});
