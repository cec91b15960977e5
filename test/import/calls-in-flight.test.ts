/**
 * A worker holds more batches than it has calls in flight: --concurrency caps the calls the
 * admin server sees, while the extra batches read, plan and record in Redis meanwhile.
 */
import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchesInHand } from '../../src/app/workers.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.js';
import { startPipeline, type Pipeline } from '../helpers/pipeline.js';

/** Passes requests on to the sandbox and counts the writes in flight at once. */
class CountingProxy {
  inFlight = 0;
  mostInFlight = 0;
  writes = 0;
  readonly server: Server;

  constructor(target: URL) {
    this.server = createServer((incoming, outgoing) => {
      const write = incoming.method !== 'GET';
      if (write) {
        this.writes++;
        this.inFlight++;
        this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
      }
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
          answer.on('end', () => {
            if (write) this.inFlight--;
          });
        },
      );
      incoming.pipe(onward);
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

let sandbox: RunningSandbox;
let proxy: CountingProxy;
let pipeline: Pipeline;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, faults: { latencyMs: 20 } });
  proxy = new CountingProxy(new URL(sandbox.url));
  const url = await proxy.listen();
  pipeline = await startPipeline({
    env: { ADMIN_BASE_URL: url },
    workerOptions: { concurrency: 2 },
  });
});

afterAll(async () => {
  await pipeline.close();
  proxy.server.close();
  await sandbox.close();
});

describe('calls in flight and batches in hand', () => {
  it('holds half as many batches again as calls in flight', () => {
    expect([1, 2, 4, 8].map(batchesInHand)).toEqual([1, 3, 6, 12]);
  });

  it('never has more calls in flight than --concurrency, with more batches in hand', async () => {
    const lines = ['username,email'];
    for (let index = 1; index <= 1200; index++) lines.push(`flight${index},f${index}@example.com`);
    // the batches the worker holds, sampled while the import runs
    let mostActive = 0;
    let running = true;
    const sampling = (async () => {
      while (running) {
        const active = await pipeline.context.importQueue.getActiveCount();
        mostActive = Math.max(mostActive, active);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })();
    const { info } = await pipeline.run(`${lines.join('\n')}\n`, {
      resource: 'users',
      mode: 'create',
      batchSize: 50,
    });
    running = false;
    await sampling;
    expect(info.state).toBe('completed');
    expect(info.counts.succeeded).toBe(1200);
    expect(proxy.writes).toBe(24);
    // two calls at once were seen, and never a third, while three batches were in hand
    expect(proxy.mostInFlight).toBe(2);
    expect(mostActive).toBe(3);
  });
});
