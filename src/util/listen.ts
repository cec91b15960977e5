/**
 * Listening on a port the operator chose: an address in use, not allowed or not on this host is
 * a usage error that names the flags to change (exit 64), and the app is closed so nothing holds
 * the process open.
 */
import type { FastifyInstance } from 'fastify';
import { PorterError } from '../errors/porter-error.js';

const REFUSED = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL']);

export interface ListenTarget {
  host: string;
  port: number;
  /** What listens, for the message ("sandbox", "API"). */
  what: string;
  /** The flags that choose the address, for the message ("--host or --port"). */
  flags: string;
}

/** Listens and gives back the address; a refused address closes the app and throws PORTER_USAGE. */
export async function listenOn(app: FastifyInstance, target: ListenTarget): Promise<string> {
  try {
    return await app.listen({ host: target.host, port: target.port });
  } catch (error) {
    await app.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && REFUSED.has(code)) {
      throw new PorterError(
        'PORTER_USAGE',
        `${target.what} cannot listen on ${target.host}:${target.port} (${code}); choose another ${target.flags}`,
        { cause: error },
      );
    }
    throw error;
  }
}
