/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/**
 * SCIM over real HTTP against the sandbox: a `--scim-only` token, Entra's and Okta's requests,
 * the DAM records they leave, the audit with the principal, and error bodies.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import type { Role } from '../../src/auth/roles.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const API_TOKEN = 'scim-api-token-0123456789';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let scimToken: string;

async function makeToken(
  name: string,
  role: Role,
  extra: { targets?: string[]; scimOnly?: boolean } = {},
): Promise<string> {
  const made = { at: new Date().toISOString(), actionId: name, who: { name: 'test' } };
  return (await securityOf(pipeline.context).tokens.create({ name, role, ...extra }, made)).token;
}

async function scim(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  token = scimToken,
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${baseUrl}/scim/v2/default${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    headers: response.headers,
  };
}

const entraUser = (userName: string, externalId: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE],
  externalId,
  userName,
  active: true,
  displayName: 'Jose Mueller',
  name: { formatted: 'Jose Mueller', familyName: 'Mueller', givenName: 'Jose' },
  emails: [{ primary: true, type: 'work', value: `${userName}` }],
  title: 'Designer',
  [ENTERPRISE]: { department: 'Marketing', employeeNumber: 'E-17' },
});

beforeAll(async () => {
  pipeline = await startPipeline({ workers: false });
  app = await buildApiApp({ context: pipeline.context, token: API_TOKEN });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  scimToken = await makeToken('entra-prod', 'operator', { targets: ['default'], scimOnly: true });
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
});

describe('SCIM over HTTP', () => {
  it('a --scim-only token opens SCIM routes and nothing else; a bad token gets a SCIM 401', async () => {
    const imports = await fetch(`${baseUrl}/v1/imports`, {
      headers: { authorization: `Bearer ${scimToken}` },
    });
    expect(imports.status).toBe(403);
    expect(((await imports.json()) as any).error.message).toContain('SCIM');
    expect((await scim('GET', '/Users')).status).toBe(200);
    const refused = await scim(
      'GET',
      '/Users',
      undefined,
      {},
      'porter_0000000000000000_' + 'x'.repeat(43),
    );
    expect(refused.status).toBe(401);
    expect(refused.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
  });

  it('Okta: an unknown userName gives an empty ListResponse', async () => {
    const { status, body } = await scim(
      'GET',
      '/Users?filter=userName%20eq%20%22nobody%40x.org%22&startIndex=1&count=100',
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });
  });

  it('creates a DAM user with its externalId as anchor; id is the userId; found by filter in any case', async () => {
    const created = await scim('POST', '/Users', entraUser('Jose.Mueller@example.com', 'e-1001'));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.headers.get('location')).toBe(`${baseUrl}/scim/v2/default/Users/${id}`);
    expect(created.headers.get('etag')).toBe(created.body.meta.version);
    const [dam] = [...pipeline.sandbox.store.allUsers()].filter(
      (user) => String(user.userId) === id,
    );
    expect(dam).toMatchObject({
      username: 'Jose.Mueller@example.com',
      firstName: 'Jose',
      lastName: 'Mueller',
      email: 'Jose.Mueller@example.com',
      dept: 'Marketing',
      status: 'Active',
      type: 'General User',
    });
    expect(pipeline.sandbox.store.getUser(Number(id))?.substitutionMap).toEqual({
      porterAnchor: 'e-1001',
    });
    const byName = await scim(
      'GET',
      '/Users?filter=USERNAME%20eq%20%22jose.mueller%40EXAMPLE.com%22',
    );
    expect(byName.body.Resources.map((r: any) => r.id)).toEqual([id]);
    const byAnchor = await scim('GET', '/Users?filter=externalId%20eq%20%22e-1001%22');
    expect(byAnchor.body.Resources.map((r: any) => r.id)).toEqual([id]);
    expect(byAnchor.body.Resources[0].name.formatted).toBe('Jose Mueller');
    const taken = await scim('POST', '/Users', entraUser('JOSE.MUELLER@example.com', 'e-other'));
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ status: '409', scimType: 'uniqueness' });
  });

  it('Entra disables with "False": the DAM user is Locked, not deleted; If-Match with a stale version is 412', async () => {
    const created = await scim('POST', '/Users', entraUser('leaver@example.com', 'e-2002'));
    const id = created.body.id as string;
    const stale = created.body.meta.version as string;
    const patched = await scim('PATCH', `/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    expect(patched.status).toBe(204);
    expect(pipeline.sandbox.store.getUser(Number(id))).toMatchObject({
      status: 'Locked',
      username: 'leaver@example.com',
    });
    const read = await scim('GET', `/Users/${id}`);
    expect(read.body.active).toBe(false);
    const refused = await scim(
      'PATCH',
      `/Users/${id}`,
      { Operations: [{ op: 'replace', value: { active: true } }] },
      { 'if-match': stale },
    );
    expect(refused.status).toBe(412);
    expect(pipeline.sandbox.store.getUser(Number(id))?.status).toBe('Locked');
  });

  it('a rename keeps the id and the anchor; groups: members added and removed in every Entra form', async () => {
    const ann = (await scim('POST', '/Users', entraUser('ann@example.com', 'e-3003'))).body
      .id as string;
    const bob = (await scim('POST', '/Users', entraUser('bob@example.com', 'e-3004'))).body
      .id as string;
    const renamed = await scim('PATCH', `/Users/${ann}`, {
      Operations: [
        { op: 'replace', value: { userName: 'ann.lee@example.com', 'name.familyName': 'Lee' } },
      ],
    });
    expect(renamed.status).toBe(204);
    expect(pipeline.sandbox.store.getUser(Number(ann))).toMatchObject({
      username: 'ann.lee@example.com',
      lastName: 'Lee',
    });
    expect(pipeline.sandbox.store.getUser(Number(ann))?.substitutionMap).toEqual({
      porterAnchor: 'e-3003',
    });

    const group = await scim('POST', '/Groups', {
      displayName: 'Marketing',
      externalId: 'g-1',
      members: [{ value: ann }],
    });
    expect(group.status).toBe(201);
    const gid = group.body.id as string;
    const add = await scim('PATCH', `/Groups/${gid}`, {
      Operations: [{ op: 'Add', path: 'members', value: [{ value: bob }] }],
    });
    expect(add.status).toBe(204);
    expect(pipeline.sandbox.store.usersOfGroup(Number(gid)).map(String).sort()).toEqual(
      [ann, bob].sort(),
    );
    let read = await scim('GET', `/Groups/${gid}`);
    expect(read.body.members.map((m: any) => m.value).sort()).toEqual([ann, bob].sort());
    expect(read.body.externalId).toBe('g-1');
    await scim('PATCH', `/Groups/${gid}`, {
      Operations: [{ op: 'Remove', path: 'members', value: [{ value: bob }] }],
    });
    read = await scim('GET', `/Groups/${gid}?excludedAttributes=members`);
    expect(read.body.members).toBeUndefined();
    read = await scim('GET', `/Groups/${gid}`);
    expect(read.body.members.map((m: any) => m.value)).toEqual([ann]);
    await scim('PATCH', `/Groups/${gid}`, {
      Operations: [{ op: 'remove', path: `members[value eq "${ann}"]` }],
    });
    read = await scim('GET', `/Groups/${gid}`);
    expect(read.body.members).toBeUndefined();
    const user = await scim('GET', `/Users/${bob}`);
    expect(user.body.groups).toBeUndefined();
  });

  it('errors are SCIM bodies: a bad filter, a missing userName, a body that is not JSON, an unknown id', async () => {
    const filter = await scim('GET', '/Users?filter=userName%20zz%20%22x%22');
    expect(filter.body).toMatchObject({ status: '400', scimType: 'invalidFilter' });
    expect((await scim('POST', '/Users', { active: true })).body).toMatchObject({
      status: '400',
      scimType: 'invalidValue',
    });
    expect((await scim('POST', '/Users', '{"acve": tre')).body).toMatchObject({
      status: '400',
      scimType: 'invalidSyntax',
    });
    expect((await scim('GET', '/Users/999999')).status).toBe(404);
  });

  it('every change is audited with the SCIM principal', async () => {
    const all = JSON.stringify(await securityOf(pipeline.context).audit.read({}));
    expect(all).toContain('scim.user.create');
    expect(all).toContain('token:entra-prod');
  });
});
