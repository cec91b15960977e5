/**
 * A request waits for a connection before its checks, not after them: the shared gate and the
 * caller's last check (a cancel, a pause) run once it can really leave.
 */
import {
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors as undiciErrors } from 'undici';
import { AdminClient } from '../../src/admin/client.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';

/** Passes requests on to the sandbox; holds each write until the test lets it go. */
class HoldingProxy {
  readonly held: (() => void)[] = [];
  writes = 0;
  private onHeld: (() => void) | undefined;
  readonly server: Server;

  constructor(target: URL) {
    this.server = createServer((incoming, outgoing) => {
      const pass = (): void => this.pass(target, incoming, outgoing);
      if (incoming.method === 'GET') return pass();
      this.writes++;
      this.held.push(pass);
      this.onHeld?.();
    });
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

  private pass(target: URL, incoming: IncomingMessage, outgoing: ServerResponse): void {
    const onward = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(onward);
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

let sandbox: RunningSandbox;
let proxy: HoldingProxy;
let client: AdminClient;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  proxy = new HoldingProxy(new URL(sandbox.url));
  client = new AdminClient({ baseUrl: await proxy.listen(), connections: 1 });
});

afterAll(async () => {
  proxy.releaseAll();
  await client.close();
  proxy.server.close();
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
    await proxy.holding(1);
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
    proxy.releaseAll();
    expect((await first).map((record) => record.username)).toEqual(['slot.first']);
    await expect(second).rejects.toThrow('cancelled meanwhile');
    expect(steps).toEqual(['first checked', 'second checked']);
    expect(proxy.writes).toBe(1);
    expect(sandbox.store.users().map((record) => record.username)).not.toContain('slot.second');
  });

  it('gives up its wait when its signal aborts, and sends nothing', async () => {
    const first = client.write('users', 'POST', [user('slot.third')]);
    await proxy.holding(1);
    const controller = new AbortController();
    let checked = false;
    const waiting = client.write('users', 'POST', [user('slot.fourth')], controller.signal, {
      beforeSend: async () => {
        checked = true;
      },
    });
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(undiciErrors.RequestAbortedError);
    proxy.releaseAll();
    await first;
    expect(checked).toBe(false);
    // the connection is free again: a next request leaves at once
    const next = client.write('users', 'POST', [user('slot.fifth')]);
    await proxy.holding(1);
    proxy.releaseAll();
    await next;
    expect(proxy.writes).toBe(3);
  });
});
