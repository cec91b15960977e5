import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { createPorterContext, type PorterContext } from '../../app/context.js';
import { startImport, writeReport } from '../../app/imports.js';
import { startLocalRedis, type LocalRedis } from '../../app/local-redis.js';
import { onShutdown } from '../../app/signals.js';
import { startWorkers } from '../../app/workers.js';
import { loadEnv, type Env } from '../../config/env.js';
import { buildApiApp } from '../../http/build-app.js';
import { loadMapping, type Mapping } from '../../ingest/index.js';
import type { ImportInfo, ImportOptions } from '../../model/import.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/server.js';
import { listenOn } from '../../util/listen.js';
import { PROJECT_ROOT } from '../../util/project-root.js';
import { assertRedisAnswers } from '../../util/redis.js';
import { redactUrl } from '../../util/redact-url.js';
import { PrometheusMetrics } from '../../metrics/prometheus.js';
import { portNumber, positiveInteger } from '../options.js';
import { loadTargets } from '../../targets/targets.js';
import { followImport, summarize } from '../progress.js';
import { importExitCode } from './import.js';

const EXAMPLES = `${join(PROJECT_ROOT, 'examples')}/`;

interface DevOptions {
  sandboxPort: number;
  newSandboxPort: number;
  apiPort: number;
  host: string;
  concurrency: number;
  demo?: boolean;
  once?: boolean;
}

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('Run sandbox, API and workers in one process against one Redis (a first look)')
    .option('--sandbox-port <port>', 'sandbox port', positiveInteger('--sandbox-port'), 8080)
    .option(
      '--new-sandbox-port <port>',
      'with --demo: port of the second, empty sandbox (target new; 0: any free port)',
      portNumber('--new-sandbox-port'),
      8081,
    )
    .option('--api-port <port>', 'API port', positiveInteger('--api-port'), 3000)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--concurrency <n>',
      'calls to the admin server in flight (with half as many batches again in hand)',
      positiveInteger('--concurrency'),
      4,
    )
    .option(
      '--demo',
      'import the samples in examples/ and print the report; start a second, empty sandbox and ' +
        `name both as targets (old = default, new) in ${DEV_TARGETS_FILE} for other shells`,
    )
    .option('--once', 'with --demo: stop after the demo instead of serving on')
    .action(async (options: DevOptions) => {
      const env = loadEnv();
      const localRedis = await ensureRedis(env);
      let sandbox: RunningSandbox;
      try {
        sandbox = await startSandbox({
          host: options.host,
          port: options.sandboxPort,
          addressFlags: '--host or --sandbox-port',
        });
      } catch (error) {
        await localRedis?.stop();
        throw error;
      }
      // the demo's migration target: empty, beside the sandbox the demo fills
      let newSandbox: RunningSandbox | undefined;
      try {
        newSandbox = options.demo
          ? await startSandbox({
              host: options.host,
              port: options.newSandboxPort,
              addressFlags: '--host or --new-sandbox-port',
            })
          : undefined;
      } catch (error) {
        await sandbox.close();
        await localRedis?.stop();
        throw error;
      }
      const devEnv: Env = {
        ...env,
        ADMIN_BASE_URL: sandbox.url,
        REDIS_URL: localRedis?.url ?? env.REDIS_URL,
      };
      // the targets this process serves are the file's, so other shells reading it agree
      const targets = newSandbox
        ? await writeDevTargets(DEV_TARGETS_FILE, sandbox.url, newSandbox.url).then((path) =>
            loadTargets({ ...devEnv, PORTER_TARGETS_FILE: path }),
          )
        : undefined;
      // API and workers share one process: the API's /metrics shows the workers' work too
      const context = await createPorterContext(devEnv, {
        metrics: new PrometheusMetrics(),
        targets,
      });
      const workers = startWorkers(context, { concurrency: options.concurrency });
      const token = env.PORTER_API_TOKEN ?? randomBytes(18).toString('base64url');
      const api = await buildApiApp({ context, token });
      const shutdown = async (): Promise<void> => {
        await api.close();
        await workers.close();
        await context.close();
        await sandbox.close();
        await newSandbox?.close();
        // its ports are gone: other shells get a clear "cannot be read" rather than a dead port
        if (newSandbox) await rm(DEV_TARGETS_FILE, { force: true });
        await localRedis?.stop();
      };
      let apiUrl: string;
      try {
        apiUrl = await listenOn(api, {
          host: options.host,
          port: options.apiPort,
          what: 'API',
          flags: '--host or --api-port',
        });
      } catch (error) {
        await shutdown();
        throw error;
      }
      console.log(`sandbox   ${sandbox.url}/wf/restapi/v2/admin/`);
      console.log(
        `API       ${apiUrl}  (Authorization: Bearer ${env.PORTER_API_TOKEN ? '$PORTER_API_TOKEN' : token})`,
      );
      console.log(`console   ${apiUrl}/console/`);
      console.log(`queues    ${apiUrl}/queues  (metrics: ${apiUrl}/metrics)`);
      console.log(
        `redis     ${localRedis ? `${localRedis.url} (started for this run)` : redactUrl(env.REDIS_URL)}`,
      );
      if (options.demo) {
        let exitCode = 1;
        try {
          exitCode = await runDemo(context);
        } finally {
          if (options.once) {
            await shutdown();
            process.exitCode = exitCode;
          }
        }
        if (options.once) return;
      }
      if (newSandbox) {
        console.log(`\ntargets   ${DEV_TARGETS_FILE}, for commands in other shells:`);
        console.log(`  old, default  ${sandbox.url}  (what the demo imported)`);
        console.log(`  new           ${newSandbox.url}  (empty)`);
        if (localRedis) console.log(`export REDIS_URL=${localRedis.url}`);
        console.log(`export PORTER_TARGETS_FILE=${DEV_TARGETS_FILE}`);
        console.log('then: npx porter migrate --from old --to new --wait');
      }
      console.log('serving; Ctrl-C to stop');
      onShutdown(context.logger, shutdown);
    });
}

/** Where `porter dev --demo` names its two sandboxes, relative to where it runs. */
export const DEV_TARGETS_FILE = '.porter/dev-targets.json';

/**
 * Writes the targets file of the demo's two sandboxes, with their real ports: `old` (also
 * `default`, so commands without a target reach it too) and `new`. No secret: the sandboxes
 * ask for none. Returns the file's path.
 */
async function writeDevTargets(path: string, oldUrl: string, newUrl: string): Promise<string> {
  const targets = {
    default: { url: oldUrl, description: 'porter dev: the sandbox the demo imports into' },
    old: { url: oldUrl, description: 'porter dev: the sandbox the demo imports into' },
    new: { url: newUrl, description: 'porter dev: an empty sandbox, to migrate into' },
  };
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(targets, null, 2)}\n`);
  return path;
}

async function ensureRedis(env: Env): Promise<LocalRedis | undefined> {
  try {
    await assertRedisAnswers(env);
    return undefined;
  } catch (error) {
    const local = await startLocalRedis();
    if (!local) throw error;
    return local;
  }
}

/** Imports the sample groups, then the sample HR feed of new hires, and prints the report. */
async function runDemo(context: PorterContext): Promise<number> {
  const base: Omit<ImportOptions, 'resource' | 'mode'> = {
    batchSize: 100,
    listSeparator: '|',
    emptyAsClear: false,
    allowAdmin: false,
  };
  // members arrive with the users (their Teams column): the groups file names none
  await demoImport(context, 'groups.csv', { ...base, resource: 'groups', mode: 'upsert' });
  const mapping = loadMapping(
    JSON.parse(await readFile(`${EXAMPLES}mapping.json`, 'utf8')) as unknown,
  );
  const users = await demoImport(
    context,
    'new-hires.csv',
    { ...base, resource: 'users', mode: 'upsert' },
    mapping,
  );
  console.log(`\nreport of ${users.id} (also: npx porter report ${users.id}):`);
  // stdout stays open: what follows the report (the targets, `serving`) is printed there too
  await writeReport(context, users.id, process.stdout, { format: 'csv', end: false });
  return importExitCode(users);
}

async function demoImport(
  context: PorterContext,
  file: string,
  options: ImportOptions,
  mapping?: Mapping,
): Promise<ImportInfo> {
  const info = await startImport(context, {
    options,
    source: createReadStream(`${EXAMPLES}${file}`),
    fileName: file,
    mapping,
  });
  console.log(
    `\nimporting examples/${file} as ${options.resource} (${options.mode}): import ${info.id}`,
  );
  const final = await followImport({
    read: () => context.store.get(info.id),
    out: process.stdout,
    redis: context.redisWatch,
  });
  console.log(summarize(final));
  return final;
}
