/**
 * Process entry point of the import workers: `npx tsx workers/import-worker.ts`, the same
 * as `npx porter worker`. Scale out by starting more, on any machine that reaches Redis.
 * PORTER_WORKER_CONCURRENCY sets the batches one process runs at once (default 4).
 */
import { runWorkerProcess } from '../src/app/workers.js';
import { loadEnv } from '../src/config/env.js';

await runWorkerProcess(loadEnv());
