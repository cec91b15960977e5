/**
 * A request waits for a connection before its checks, not after them: the shared gate and the
 * caller's last check (a cancel, a pause) run once it can really leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors as undiciErrors } from 'undici';
import { AdminClient } from '../../src/admin/client.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { forward, startProxy, type TestProxy } from '../helpers/proxy.js';

/** Writes held on their way to the sandbox until the test lets them go. */
class HeldWrites {
  readonly held: (() => void)[] = [];
  writes = 0;
  private onHeld: (() => void) | undefined;

  hold(pass: () => void): void {
    this.writes++;
    this.held.push(pass);
    this.onHeld?.();
  }

  /** Resolves once `count` writes are held. */
  async holding(count: number): Promise<void> {
    while (this.held.length < count) {
      await new Promise<void>((resolve) => (this.onHeld = resolve));
    }
  }

  releaseAll(): void {
    for (const pass of this.held.splice(0)) pass();
  }
}

let sandbox: RunningSandbox;
let proxy: TestProxy;
const writes = new HeldWrites();
let client: AdminClient;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  const target = new URL(sandbox.url);
  proxy = await startProxy((incoming, outgoing) => {
    const pass = (): void => forward(target, incoming, outgoing);
    if (incoming.method === 'GET') pass();
    else writes.hold(pass);
  });
  client = new AdminClient({ baseUrl: proxy.url, connections: 1 });
});

afterAll(async () => {
  writes.releaseAll();
  await client.close();
  proxy.close();
  await sandbox.close();
});

const user = (username: string) => ({ username, email: `${username}@example.com` });

describe('a request waiting for a connection', () => {
  it('runs its last check only once the connection is its own, and stays home when told', async () => {
    const steps: string[] = [];
    const first = client.write('users', 'POST', [user('slot.first')], undefined, {
      beforeSend: async () => {
        steps.push('first checked');
      },
    });
    await writes.holding(1);
    const second = client.write('users', 'POST', [user('slot.second')], undefined, {
      beforeSend: async () => {
        steps.push('second checked');
        // a cancel seen at the last moment
        throw new Error('cancelled meanwhile');
      },
    });
    // the second waits for the one connection: its check has not run
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(steps).toEqual(['first checked']);
    writes.releaseAll();
    expect((await first).map((record) => record.username)).toEqual(['slot.first']);
    await expect(second).rejects.toThrow('cancelled meanwhile');
    expect(steps).toEqual(['first checked', 'second checked']);
    expect(writes.writes).toBe(1);
    expect(sandbox.store.users().map((record) => record.username)).not.toContain('slot.second');
  });

  it('gives up its wait when its signal aborts, and sends nothing', async () => {
    const first = client.write('users', 'POST', [user('slot.third')]);
    await writes.holding(1);
    const controller = new AbortController();
    let checked = false;
    const waiting = client.write('users', 'POST', [user('slot.fourth')], controller.signal, {
      beforeSend: async () => {
        checked = true;
      },
    });
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(undiciErrors.RequestAbortedError);
    writes.releaseAll();
    await first;
    expect(checked).toBe(false);
    // the connection is free again: a next request leaves at once
    const next = client.write('users', 'POST', [user('slot.fifth')]);
    await writes.holding(1);
    writes.releaseAll();
    await next;
    expect(writes.writes).toBe(3);
  });
});
