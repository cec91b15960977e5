import type { Command } from 'commander';
import { runWorkerProcess } from '../../app/workers.js';
import { loadEnv } from '../../config/env.js';
import { portNumber, positiveInteger } from '../options.js';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run import and export workers until SIGINT/SIGTERM (the work in hand is finished first)',
    )
    .option(
      '--concurrency <n>',
      'calls to the admin server in flight from this process, with half as many batches again in hand (default: PORTER_WORKER_CONCURRENCY, 4)',
      positiveInteger('--concurrency'),
    )
    .option(
      '--max-rps <n>',
      'cap on requests per second to the admin server across all workers (default: PORTER_MAX_RPS)',
      positiveInteger('--max-rps'),
    )
    .option(
      '--metrics-port <port>',
      'serve /metrics, /healthz and /readyz on this port (default: PORTER_METRICS_PORT; none when unset)',
      portNumber('--metrics-port'),
    )
    .option(
      '--metrics-host <host>',
      'address the metrics port listens on (default: PORTER_METRICS_HOST, 127.0.0.1)',
    )
    .action(
      async (options: {
        concurrency?: number;
        maxRps?: number;
        metricsPort?: number;
        metricsHost?: string;
      }) => {
        const env = loadEnv();
        const running = await runWorkerProcess(
          { ...env, PORTER_MAX_RPS: options.maxRps ?? env.PORTER_MAX_RPS },
          {
            concurrency: options.concurrency,
            metricsPort: options.metricsPort,
            metricsHost: options.metricsHost,
          },
        );
        if (running.metricsAddress) console.log(`metrics   ${running.metricsAddress}/metrics`);
        // the process lives until a signal; the workers keep the event loop busy
      },
    );
}
