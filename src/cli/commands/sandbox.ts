/** `porter sandbox`: serves the sandbox admin interface until SIGINT or SIGTERM. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ADMIN_PATH_PREFIX } from '../../admin/resources.js';
import {
  checkFaults,
  faultExpectation,
  type FaultOptions,
  type SandboxOptions,
} from '../../sandbox/options.js';
import { startSandbox } from '../../sandbox/server.js';
import { createLogger } from '../../util/logger.js';
import { checkStateFile } from '../paths.js';

interface SandboxFlags {
  host: string;
  port: number;
  apiKey?: string;
  user?: string;
  password?: string;
  data?: string;
  seedUsers?: number;
  seedGroups?: number;
  seedAcls?: number;
  latency?: number;
  failRate?: number;
  dropRate?: number;
  rateLimit?: number;
  maxRecords?: number;
  batchFailure?: FaultOptions['batchFailure'];
}

/** A flag parser for whole numbers within [min, max]. */
function wholeNumber(min: number, max: number, what: string): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`expected ${what}.`);
    }
    return value;
  };
}

/** A flag parser that checks one fault option with the sandbox's own rules. */
function fault<K extends keyof FaultOptions>(name: K, convert: (text: string) => FaultOptions[K]) {
  return (text: string): FaultOptions[K] => {
    const value = convert(text);
    try {
      checkFaults({ [name]: value });
    } catch {
      throw new InvalidArgumentError(`expected ${faultExpectation(name)}.`);
    }
    return value;
  };
}

const number = (text: string): number => (text.trim() === '' ? Number.NaN : Number(text));
const count = wholeNumber(0, Number.MAX_SAFE_INTEGER, 'a whole number ≥ 0');

/** Registers `porter sandbox`. */
export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('Serve the sandbox: a complete admin interface in this process')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option(
      '--port <port>',
      'port to listen on (0 = any free port)',
      wholeNumber(0, 65_535, 'a port from 0 to 65535'),
      8080,
    )
    .option('--api-key <key>', 'require this key as apikey header or query parameter')
    .option(
      '--user <user>',
      'require this user (HTTP Basic or user/pass parameters); needs --password',
    )
    .option('--password <password>', 'password of --user')
    .option('--data <file>', 'load state from FILE at start and save every change to it')
    .option('--seed-users <n>', 'generate N users into an empty store', count)
    .option('--seed-groups <n>', 'generate N groups into an empty store', count)
    .option('--seed-acls <n>', 'generate N ACLs (spread over the seeded groups)', count)
    .option('--latency <ms>', 'delay every answer by MS milliseconds', fault('latencyMs', number))
    .option(
      '--fail-rate <p>',
      'refuse a request with 503 with probability P (0..1)',
      fault('failRate', number),
    )
    .option(
      '--drop-rate <p>',
      'apply a request, then drop its connection unanswered, with probability P',
      fault('dropRate', number),
    )
    .option(
      '--rate-limit <n>',
      'answer 429 past N requests per second (0 = off)',
      fault('rateLimit', number),
    )
    .option(
      '--max-records <n>',
      'answer 413 past N records per request (0 = off)',
      fault('maxRecords', number),
    )
    .addOption(
      new Option(
        '--batch-failure <mode>',
        'when one record fails: apply none, those before it, or all others and answer 200 without it',
      )
        .choices(['atomic', 'partial', 'omit'])
        .default('atomic'),
    )
    .action(async (flags: SandboxFlags) => {
      if (flags.data !== undefined) await checkStateFile(flags.data, '--data');
      await serve(flags);
    });
}

async function serve(flags: SandboxFlags): Promise<void> {
  const options: SandboxOptions = {
    host: flags.host,
    port: flags.port,
    apiKey: flags.apiKey,
    user: flags.user,
    password: flags.password,
    dataFile: flags.data,
    seed: { users: flags.seedUsers, groups: flags.seedGroups, acls: flags.seedAcls },
    faults: {
      latencyMs: flags.latency,
      failRate: flags.failRate,
      dropRate: flags.dropRate,
      rateLimit: flags.rateLimit,
      maxRecords: flags.maxRecords,
      batchFailure: flags.batchFailure,
    },
    logger: createLogger({ name: 'porter-sandbox' }),
  };
  const sandbox = await startSandbox(options);
  console.log(
    `porter sandbox listening on ${sandbox.url} (admin interface under ${ADMIN_PATH_PREFIX})`,
  );
  console.log(describe(options, sandbox.store.counts()));
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.log(`porter sandbox: ${signal}, closing`);
  await sandbox.close();
  console.log('porter sandbox: closed');
}

/** One line on what is configured; secrets are named, never shown. */
function describe(
  options: SandboxOptions,
  counts: { users: number; groups: number; acls: number },
): string {
  const auth = [options.apiKey ? 'api key' : '', options.user ? 'user/password' : ''].filter(
    Boolean,
  );
  const faults = Object.entries(options.faults ?? {})
    .filter(
      ([name, value]) => value !== undefined && !(name === 'batchFailure' && value === 'atomic'),
    )
    .map(([name, value]) => `${name}=${String(value)}`);
  return [
    `auth: ${auth.length ? auth.join(' or ') : 'off'}`,
    `data: ${options.dataFile ?? 'memory only'}`,
    `records: ${counts.users} users, ${counts.groups} groups, ${counts.acls} ACLs`,
    `faults: ${faults.length ? faults.join(', ') : 'none'}`,
  ].join('; ');
}
