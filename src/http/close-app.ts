/**
 * Stops the API: no new connections, uploads in progress may finish, for at most `timeoutMs`.
 * Past it, the connections still open are cut: their uploads break off, so their imports end
 * `failed` with nothing sent, and the process can exit.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export async function closeWithin(
  app: FastifyInstance,
  timeoutMs: number,
  logger?: Logger,
): Promise<void> {
  const closing = app.close();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), timeoutMs);
  });
  const outcome = await Promise.race([closing.then(() => 'closed' as const), expired]);
  clearTimeout(timer);
  if (outcome === 'expired') {
    logger?.warn({ timeoutMs }, 'uploads still in progress at the shutdown timeout; cutting them');
    app.server.closeAllConnections();
    await closing;
  }
}
