/** A small HTTP proxy in front of a sandbox, for tests that watch or hold the calls porter makes. */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface TestProxy {
  url: string;
  close(): void;
}

/** Passes one request on to the target; `onEnd` is told once its answer has gone back whole. */
export function forward(
  target: URL,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  onEnd?: () => void,
): void {
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
      if (onEnd) answer.on('end', onEnd);
    },
  );
  // a server that drops its answer (the sandbox's dropRate) drops it for the client too
  onward.on('error', () => outgoing.destroy());
  incoming.pipe(onward);
}

/** Listens on a free local port; every request goes to `handle`. */
export async function startProxy(
  handle: (incoming: IncomingMessage, outgoing: ServerResponse) => void,
): Promise<TestProxy> {
  const server = createServer(handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}
