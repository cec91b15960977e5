/**
 * A TCP proxy to Redis that can hold every byte both ways (a cut link: no answer, no reset, as in
 * a network partition) and let them go later, for a worker that must stay alive but not reach
 * Redis.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface CuttableLink {
  /** The target's URL with the proxy's host and port. */
  url: string;
  /** Holds every byte from now on, both ways (connections stay open). */
  cut(): void;
  /** Lets the held bytes go, and what comes after. */
  heal(): void;
  close(): void;
}

/** A proxy on a free local port in front of `target` (a redis:// URL). */
export async function startLink(target: URL): Promise<CuttableLink> {
  let held = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket): void => {
    const pending: Buffer[] = [];
    from.on('data', (chunk: Buffer) => (held ? pending.push(chunk) : to.write(chunk)));
    flushes.add(() => {
      for (const chunk of pending.splice(0)) to.write(chunk);
    });
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cut: () => {
      held = true;
    },
    heal: () => {
      held = false;
      for (const flush of flushes) flush();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
