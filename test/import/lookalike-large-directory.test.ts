/**
 * The look-alike check against a directory of thousands, with a one-row upload: whatever the
 * lookup mode, `Alice` and a Cyrillic `аlice` are refused next to the server's `alice`. With
 * `auto`, such an upload is under 1% of the directory, which once meant one read per record and
 * no comparison with the server's keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline({ sandbox: { seed: { users: 4000, groups: 10 } } });
  const client = pipeline.context.createAdminClient();
  await client.postUsers([{ username: 'alice' }]);
  await client.close();
  // a snapshot learns the directory's size, as a first import against it would
  const { info } = await pipeline.run(csv(['username', 'email'], [['alice', 'alice@x.example']]), {
    resource: 'users',
    mode: 'update',
    lookup: 'snapshot',
  });
  expect(info.lookup?.records).toBeGreaterThan(4000);
}, 60_000);
afterAll(async () => {
  await pipeline?.close();
});

const userWrites = (): number => {
  const { users } = pipeline.sandbox.store.stats.writes;
  return users.POST + users.PUT;
};

describe('look-alikes against a directory of thousands, one-row upload', () => {
  it.each([
    ['auto', 'create', 'Alice'],
    ['auto', 'upsert', '\u0430lice'],
    ['each', 'create', 'Alice'],
    ['each', 'upsert', '\u0430lice'],
  ] as const)(
    'lookup %s, %s %s: PORTER_KEY_LOOKALIKE naming alice, nothing sent',
    async (lookup, mode, username) => {
      const before = userWrites();
      const { info, results } = await pipeline.run(csv(['username'], [[username]]), {
        resource: 'users',
        mode,
        lookup,
      });
      expect(results[0]).toMatchObject({ status: 'failed', errorCode: 'PORTER_KEY_LOOKALIKE' });
      expect(results[0]!.error).toContain('looks like alice');
      expect(userWrites()).toBe(before);
      expect(pipeline.sandbox.store.userByName(username)).toBeUndefined();
      // auto reads the directory in bulk for a create; each keeps its reads and scans the keys
      expect(info.lookup?.mode).toBe(lookup === 'auto' ? 'snapshot' : 'each');
      if (lookup === 'each') expect(info.lookup?.why).toMatch(/look-alikes compared with \d+ keys/);
    },
  );

  it('each still creates a key that looks like none on the server', async () => {
    const { results } = await pipeline.run(csv(['username'], [['zed.unlike']]), {
      resource: 'users',
      mode: 'create',
      lookup: 'each',
    });
    expect(results[0]).toMatchObject({ status: 'succeeded', action: 'create' });
  });

  it('an update, which creates nothing, still reads record by record under auto', async () => {
    const { info } = await pipeline.run(csv(['username', 'email'], [['alice', 'a2@x.example']]), {
      resource: 'users',
      mode: 'update',
    });
    expect(info.lookup).toMatchObject({ mode: 'each', requested: 'auto' });
  });
});
