import type { Command } from 'commander';
import { runWorkerProcess } from '../../app/workers.js';
import { loadEnv } from '../../config/env.js';
import { positiveInteger } from '../options.js';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run import and export workers until SIGINT/SIGTERM (the work in hand is finished first)',
    )
    .option(
      '--concurrency <n>',
      'batches run at once in this process (default: PORTER_WORKER_CONCURRENCY, 4)',
      positiveInteger('--concurrency'),
    )
    .option(
      '--max-rps <n>',
      'cap on requests per second to the admin server across all workers (default: PORTER_MAX_RPS)',
      positiveInteger('--max-rps'),
    )
    .action(async (options: { concurrency?: number; maxRps?: number }) => {
      const env = loadEnv();
      await runWorkerProcess(
        { ...env, PORTER_MAX_RPS: options.maxRps ?? env.PORTER_MAX_RPS },
        { concurrency: options.concurrency },
      );
      // the process lives until a signal; the workers keep the event loop busy
    });
}
