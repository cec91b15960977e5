/** A pipeline whose sandbox knows porter's own account, and helpers to seed it and count writes. */
import type { GroupRecord, UserRecord } from '../../src/admin/schemas.js';
import type {
  ImportInfo,
  ImportOptions,
  RecordResult,
  SyncOptions,
} from '../../src/model/import.js';
import { securityOf } from '../../src/app/security.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

/** The account porter signs in as in these tests (ADMIN_USER). */
export const SELF = 'svc.porter';
const PASSWORD = 'sync-test-password-0123456789';

export async function startSyncPipeline(
  seed?: { users?: number },
  env: Record<string, string> = {},
): Promise<Pipeline> {
  return startPipeline({
    sandbox: { user: SELF, password: PASSWORD, seed },
    env: { ...env, ADMIN_USER: SELF, ADMIN_PASSWORD: PASSWORD },
  });
}

/** What a `porter` child process needs, credentials included. */
export function syncChildEnv(pipeline: Pipeline): Record<string, string> {
  return { ...pipeline.childEnv(), ADMIN_USER: SELF, ADMIN_PASSWORD: PASSWORD };
}

/**
 * An approver's token, made here, as a `porter` child process is given it (PORTER_TOKEN): the
 * command line passes four eyes only as a token's principal.
 */
export async function approverEnv(
  pipeline: Pipeline,
  name: string,
): Promise<Record<string, string>> {
  const { token } = await securityOf(pipeline.context).tokens.create(
    { name, role: 'approver' },
    { at: new Date().toISOString(), actionId: `make-${name}`, who: { name: 'test' } },
  );
  return { ...syncChildEnv(pipeline), PORTER_TOKEN: token };
}

/** Writes (PUT, POST, DELETE) the sandbox has answered so far. */
export function writes(pipeline: Pipeline): number {
  const { users, groups, acls } = pipeline.sandbox.store.stats.writes;
  return [users, groups, acls].reduce(
    (sum, byMethod) => sum + byMethod.PUT + byMethod.POST + byMethod.DELETE,
    0,
  );
}

export async function seedUsers(pipeline: Pipeline, users: UserRecord[]): Promise<void> {
  const client = pipeline.context.createAdminClient();
  try {
    await client.postUsers(users);
  } finally {
    await client.close();
  }
}

export async function seedGroups(pipeline: Pipeline, groups: GroupRecord[]): Promise<void> {
  const client = pipeline.context.createAdminClient();
  try {
    await client.postGroups(groups);
  } finally {
    await client.close();
  }
}

/** Runs a sync of `text` and waits until it is settled (ended, or held). */
export async function runSync(
  pipeline: Pipeline,
  text: string,
  sync: Partial<SyncOptions> = {},
  options: Partial<ImportOptions> = {},
): Promise<{ info: ImportInfo; results: RecordResult[] }> {
  return pipeline.run(text, {
    resource: 'users',
    mode: 'sync',
    ...options,
    sync: sync as SyncOptions,
  });
}

/** Results by key: [status, action] (server-only ones marked with a trailing "*"). */
export function outcomes(results: RecordResult[]): Record<string, string> {
  const byKey: Record<string, string> = {};
  for (const result of results) {
    byKey[`${result.key ?? ''}${result.serverOnly ? '*' : ''}`] =
      `${result.status} ${result.action ?? '-'}`;
  }
  return byKey;
}

export function status(pipeline: Pipeline, username: string): string | undefined {
  return pipeline.sandbox.store.userByName(username)?.status;
}
