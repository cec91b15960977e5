/** Source directories for migration tests, and bundles read from a sandbox over real HTTP. */
import { AdminClient } from '../../src/admin/client.js';
import type { ResourceName } from '../../src/admin/resources.js';
import { bundleSource } from '../../src/export/bundle.js';
import type { RecordBatches } from '../../src/export/export-types.js';

/** A bundle of everything the server at `url` holds, as `porter export --format bundle` writes it. */
export async function bundleText(url: string): Promise<string> {
  const client = new AdminClient({ baseUrl: url, requestTimeoutMs: 10_000 });
  try {
    const read = (resource: ResourceName) => (): RecordBatches =>
      client.streamBatches(resource) as RecordBatches;
    let text = '';
    for await (const part of bundleSource(
      { exportedAt: new Date().toISOString(), source: url, porterVersion: '0.1.0' },
      [
        ['groups', read('groups')],
        ['users', read('users')],
        ['acls', read('acls')],
      ],
    )) {
      text += part;
    }
    return text;
  } finally {
    await client.close();
  }
}

export interface SourceShape {
  groups: number;
  usersPerGroup: number;
  aclsPerGroup: number;
  /** Prefix of every name, so two sources never collide by accident. */
  tag?: string;
}

/**
 * Writes groups, ACLs, users and memberships through the admin interface: group g has ACLs
 * `acl-g-k` and users `user-g-u`, each user in its own group and in the next one.
 */
export async function seedSource(url: string, shape: SourceShape): Promise<void> {
  const tag = shape.tag ?? 'src';
  const client = new AdminClient({ baseUrl: url, requestTimeoutMs: 10_000 });
  try {
    const groups = await client.postGroups(
      Array.from({ length: shape.groups }, (_, g) => ({
        name: `${tag} group ${g}`,
        description: `group number ${g}`,
        priority: g % 5,
        loadingDockType: g === 0 ? 10_000 : 2,
        loginText: g % 2 === 0 ? '=HYPERLINK("x")' : '',
      })),
    );
    const ids = groups.map((group) => group.id!);
    await client.putAcls(
      ids.flatMap((groupId, g) =>
        Array.from({ length: shape.aclsPerGroup }, (_, k) => ({
          name: `acl ${g}-${k}`,
          groupId,
          description: `ACL ${k} of group ${g}`,
          hidden: k % 2 === 1,
          revokedPermissions: k % 2 === 0 ? ['fileUpload', 'archive'] : [],
          rootPath: `/Assets/${g}`,
          workspaces: [],
          searchFilter: k === 0 ? null : 'status:approved',
          forms: ['Basic'],
          uploadForm: 'Basic',
        })),
      ),
    );
    await client.postUsers(
      ids.flatMap((groupId, g) =>
        Array.from({ length: shape.usersPerGroup }, (_, u) => ({
          username: `${tag}.user-${g}-${u}`,
          firstName: `First ${g}`,
          lastName: `Last ${u}`,
          position: 'vertical',
          phone: '+49 30 1234',
          email: `${tag}.${g}.${u}@example.com`,
          groups: [groupId, ids[(g + 1) % ids.length]!],
        })),
      ),
    );
  } finally {
    await client.close();
  }
}
