/**
 * Look-alike accounts against the server: with `alice` on the admin server, an upload that would
 * create `Alice`, `ALICE`, a Cyrillic `аlice` or a full-width `ａｌｉｃｅ` is refused, naming
 * `alice`, and nothing is sent; `--allow-lookalike` lets it through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csv, startPipeline, type Pipeline } from '../helpers/pipeline.js';

let pipeline: Pipeline;
beforeAll(async () => {
  pipeline = await startPipeline();
  const client = pipeline.context.createAdminClient();
  await client.postUsers([{ username: 'alice' }]);
  await client.postGroups([{ name: 'Finance' }]);
  await client.close();
});
afterAll(async () => {
  await pipeline?.close();
});

const writes = (): number => {
  const { users, groups } = pipeline.sandbox.store.stats.writes;
  return users.POST + users.PUT + groups.POST + groups.PUT;
};

describe('a key that looks like a key on the server', () => {
  it.each(['Alice', 'ALICE', '\u0430lice', 'ａｌｉｃｅ'])(
    'create %s: PORTER_KEY_LOOKALIKE naming alice, nothing sent',
    async (username) => {
      const before = writes();
      const { results } = await pipeline.run(csv(['username'], [[username]]), {
        resource: 'users',
        mode: 'create',
      });
      expect(results[0]).toMatchObject({
        status: 'failed',
        errorCode: 'PORTER_KEY_LOOKALIKE',
        field: 'username',
      });
      expect(results[0]!.error).toContain('looks like alice');
      expect(writes()).toBe(before);
    },
  );

  it('upsert of a group that looks like an existing one is refused; the exact name updates', async () => {
    const shouting = await pipeline.run(csv(['name', 'description'], [['FINANCE', 'loud']]), {
      resource: 'groups',
      mode: 'upsert',
    });
    expect(shouting.results[0]).toMatchObject({
      status: 'failed',
      errorCode: 'PORTER_KEY_LOOKALIKE',
    });
    const exact = await pipeline.run(csv(['name', 'description'], [['Finance', 'the real one']]), {
      resource: 'groups',
      mode: 'upsert',
    });
    expect(exact.results[0]).toMatchObject({ status: 'succeeded', action: 'update' });
  });

  it('--allow-lookalike creates it', async () => {
    const { results } = await pipeline.run(csv(['username'], [['Alice']]), {
      resource: 'users',
      mode: 'create',
      allowLookalike: true,
    });
    expect(results[0]).toMatchObject({ status: 'succeeded', action: 'create' });
    expect(pipeline.sandbox.store.userByName('Alice')).toBeDefined();
  });

  it('the auto lookup reads the directory in bulk to compare, whatever the upload size', async () => {
    const { info } = await pipeline.run(csv(['username'], [['bob']]), {
      resource: 'users',
      mode: 'create',
    });
    expect(info.lookup).toMatchObject({ mode: 'snapshot', requested: 'auto' });
  });
});
