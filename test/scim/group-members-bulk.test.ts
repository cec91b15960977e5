/**
 * A group PATCH that adds or removes 5,000 members is one write: the group's users array in one
 * call, never a call per member. The calls it takes are counted at the sandbox.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { securityOf } from '../../src/app/security.js';
import { buildApiApp } from '../../src/http/build-app.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

const MEMBERS = 5000;
let dir: string;
let sandbox: RunningSandbox;
let pipeline: Pipeline;
let app: FastifyInstance;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'porter-scim-members-'));
  sandbox = await startSandbox({ port: 0, seed: { users: MEMBERS, groups: 1 } });
  const targetsFile = join(dir, 'targets.json');
  await writeFile(targetsFile, JSON.stringify({ idp: { url: sandbox.url } }));
  pipeline = await startPipeline({ workers: false, env: { PORTER_TARGETS_FILE: targetsFile } });
  app = await buildApiApp({ context: pipeline.context, token: 'scim-members-api-token-012345' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const made = { at: new Date().toISOString(), actionId: 'setup', who: { name: 'test' } };
  token = (
    await securityOf(pipeline.context).tokens.create(
      { name: 'entra', role: 'operator', targets: ['idp'], scimOnly: true },
      made,
    )
  ).token;
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

async function patch(groupId: number, operations: unknown[]): Promise<number> {
  const response = await fetch(`${baseUrl}/scim/v2/idp/Groups/${groupId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    body: JSON.stringify({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: operations,
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('a group PATCH of 5,000 members', () => {
  it('adds them in one write call, and removes them in one', async () => {
    const group = sandbox.store.groups()[0]!;
    const ids = sandbox.store
      .users()
      .map((user) => user.userId!)
      .slice(0, MEMBERS);
    expect(ids).toHaveLength(MEMBERS);
    sandbox.store.resetStats();

    const added = await patch(group.id!, [
      { op: 'Add', path: 'members', value: ids.map((id) => ({ value: String(id) })) },
    ]);
    expect(added).toBeLessThan(300);
    expect(sandbox.store.usersOfGroup(group.id!)).toHaveLength(MEMBERS);
    const addStats = structuredClone(sandbox.store.stats);
    // one write: the group's users array; the rest are a handful of reads, never one per member
    expect(addStats.writes.groups.PUT).toBe(1);
    expect(addStats.writes.users).toEqual({ PUT: 0, POST: 0, DELETE: 0 });
    const addCalls = Object.values(addStats.requests).reduce((a, b) => a + b, 0);
    expect(addCalls).toBeLessThanOrEqual(8);
    console.log(`5,000-member add: ${addCalls} calls (${addStats.writes.groups.PUT} write)`);

    sandbox.store.resetStats();
    const removed = await patch(group.id!, [
      { op: 'remove', path: 'members', value: ids.map((id) => ({ value: String(id) })) },
    ]);
    expect(removed).toBeLessThan(300);
    expect(sandbox.store.usersOfGroup(group.id!)).toHaveLength(0);
    const removeStats = sandbox.store.stats;
    expect(removeStats.writes.groups.PUT).toBe(1);
    const removeCalls = Object.values(removeStats.requests).reduce((a, b) => a + b, 0);
    expect(removeCalls).toBeLessThanOrEqual(8);
    console.log(
      `5,000-member remove: ${removeCalls} calls (${removeStats.writes.groups.PUT} write)`,
    );
  });
});
