import type { Command } from 'commander';
import { createPorterContext } from '../../app/context.js';
import { apiSignInWays } from '../../app/security.js';
import { onShutdown } from '../../app/signals.js';
import { loadEnv } from '../../config/env.js';
import { PorterError } from '../../errors/porter-error.js';
import { closeWithin } from '../../http/close-app.js';
import { buildApiApp } from '../../http/build-app.js';
import { PrometheusMetrics } from '../../metrics/prometheus.js';
import { listenOn } from '../../util/listen.js';
import { positiveInteger } from '../options.js';

export function registerApiCommand(program: Command): void {
  program
    .command('api')
    .description(
      'Serve the producer HTTP API (needs PORTER_API_TOKEN, a token from `porter tokens create` or PORTER_OIDC_ISSUER)',
    )
    .option('--port <port>', 'port to listen on', positiveInteger('--port'), 3000)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .action(async (options: { port: number; host: string }) => {
      const env = loadEnv();
      // the admin calls, records and batches of this process go to its /metrics
      const context = await createPorterContext(env, { metrics: new PrometheusMetrics() });
      let address: string;
      let ways: string[];
      let app: Awaited<ReturnType<typeof buildApiApp>>;
      try {
        ways = await apiSignInWays(context);
        if (ways.length === 0) {
          throw new PorterError(
            'PORTER_CONFIG_INVALID',
            'PORTER_API_TOKEN: set a token (at least 16 characters) that clients send as Authorization: Bearer <token>, or create one with `porter tokens create`, or configure PORTER_OIDC_ISSUER',
          );
        }
        app = await buildApiApp({ context, token: env.PORTER_API_TOKEN, logger: true });
        address = await listenOn(app, {
          host: options.host,
          port: options.port,
          what: 'API',
          flags: '--host or --port',
        });
      } catch (error) {
        // the context's Redis connections would keep the process alive
        await context.close();
        throw error;
      }
      console.log(`porter API listening on ${address} (OpenAPI: ${address}/docs/json)`);
      console.log(`queues dashboard ${address}/queues, metrics ${address}/metrics`);
      console.log(`console at ${address}/console/ (sign in with ${ways.join(' or ')})`);
      onShutdown(context.logger, async () => {
        // stops accepting, lets uploads in progress finish (up to PORTER_SHUTDOWN_TIMEOUT_MS)
        await closeWithin(app, env.PORTER_SHUTDOWN_TIMEOUT_MS, context.logger);
        await context.close();
      });
    });
}
