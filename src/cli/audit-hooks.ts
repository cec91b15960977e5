/**
 * The CLI's principal and audit events. The CLI holds Redis itself, so API roles cannot bind
 * it: it acts as admin, named `cli:<shell user>` (PORTER_CLI_USER overrides), and what it
 * starts records that name; a command given an API token acts as the token's principal instead
 * (token-principal.ts). A command that changes state writes an `intent` event before it
 * runs and a `result` event after (or its error), with the same action id.
 */
import { CommanderError, type Command } from 'commander';
import type { Redis } from 'ioredis';
import { runAs, type Actor } from '../auth/acting.js';
import { cliPrincipal } from '../auth/principal.js';
import { whoOf, type AuditEvent } from '../audit/audit-event.js';
import type { AuditLog } from '../audit/audit-log.js';
import { errorResult, outcomeOfExit } from '../audit/outcome.js';
import { ERROR_CODES } from '../errors/codes.js';
import { isPorterError } from '../errors/porter-error.js';

/** Commands that change state, by their path, and their audit action. */
const ACTIONS: Readonly<Record<string, string>> = {
  import: 'import.start',
  sync: 'import.start',
  cancel: 'import.cancel',
  resume: 'import.resume',
  retry: 'import.retry',
  apply: 'import.apply',
  approve: 'import.approve',
  undo: 'import.undo',
  migrate: 'migration.start',
  export: 'export.start',
  'schedule add': 'schedule.add',
  'schedule remove': 'schedule.remove',
  'notify test': 'notify.send-test',
  'notify redeliver': 'notify.redeliver',
};

const OPTION_KEYS = ['target', 'mode', 'dryRun', 'resource', 'name', 'folder'];

function pathOf(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

interface Pending {
  audit: AuditLog;
  redis: Redis;
  event: AuditEvent;
  /** A new connection and audit log, as the first were made. */
  open: () => { audit: AuditLog; redis: Redis };
}

/** What the command created and came to: the imports, and the state and counts it ended with. */
function endedWhat(actor: Actor): Record<string, unknown> {
  const { ended } = actor;
  return {
    ...(actor.created.length > 0 ? { created: actor.created } : {}),
    ...(ended?.id !== undefined ? { id: ended.id } : {}),
    ...(ended?.state !== undefined ? { state: ended.state } : {}),
    ...(ended?.counts !== undefined ? { counts: ended.counts } : {}),
  };
}

/**
 * The command's result: its exit code and outcome (an import that failed some records is
 * `partial`, a held sync `held`; `refused` only for an error before anything was created), and
 * the error code of a failure, thrown or reported.
 */
function resultOf(actor: Actor, failure: unknown): NonNullable<AuditEvent['result']> {
  const created = actor.created.length > 0;
  if (failure instanceof CommanderError) {
    // a wrong argument: refused before the command ran
    const { exitCode } = ERROR_CODES.PORTER_USAGE;
    return { ok: false, outcome: 'refused', exitCode, code: 'PORTER_USAGE' };
  }
  if (failure !== undefined) {
    return {
      ...errorResult(failure, created),
      exitCode: isPorterError(failure) ? failure.exitCode : ERROR_CODES.PORTER_INTERNAL.exitCode,
    };
  }
  const exitCode = Number(process.exitCode ?? 0);
  const code = actor.ended?.code;
  return {
    ok: exitCode === 0,
    outcome: outcomeOfExit(exitCode),
    exitCode,
    ...(code !== undefined ? { code } : {}),
  };
}

/** Runs the program as the CLI's principal, auditing the commands that change state. */
export async function runAuditedCli(program: Command, run: () => Promise<unknown>): Promise<void> {
  const actor: Actor = { principal: cliPrincipal(), from: { address: 'cli' }, created: [] };
  let pending: Pending | undefined;
  program.hook('preAction', async (_program, command) => {
    // a command given an API token acts as its principal from its first event on
    const token = command.opts<{ token?: unknown }>().token;
    // loaded once a command runs: its --help, or a refused argument, needs neither Redis nor env
    const { actAsToken } = await import('./token-principal.js');
    await actAsToken(actor, pathOf(command), typeof token === 'string' ? token : undefined);
    const action = ACTIONS[pathOf(command)];
    if (!action) return;
    const [{ loadEnv }, { createRedisConnection }, { AuditLog, newActionId }] = await Promise.all([
      import('../config/env.js'),
      import('../redis/connect.js'),
      import('../audit/audit-log.js'),
    ]);
    const env = loadEnv();
    // no retries: a Redis that does not answer leaves the command to say so itself (or to
    // refuse its arguments first); a command that cannot reach Redis changes nothing
    const open = (): { audit: AuditLog; redis: Redis } => {
      // the Redis every other connection of porter uses: one node, a Sentinel set or a Cluster
      const redis = createRedisConnection(env, 'probe', { timeoutMs: 5_000 });
      redis.on('error', () => {});
      const audit = new AuditLog({
        redis,
        prefix: env.PORTER_PREFIX,
        retentionDays: env.PORTER_AUDIT_RETENTION_DAYS,
        file: env.PORTER_AUDIT_FILE,
      });
      return { audit, redis };
    };
    const { audit, redis } = open();
    const options = command.opts<Record<string, unknown>>();
    const what: Record<string, unknown> = { command: pathOf(command) };
    if (command.args.length > 0) what.args = command.args.slice(0, 10);
    for (const key of OPTION_KEYS) if (options[key] !== undefined) what[key] = options[key];
    actor.actionId = newActionId();
    const event: AuditEvent = {
      at: new Date().toISOString(),
      action,
      phase: 'intent',
      actionId: actor.actionId,
      who: whoOf(actor.principal),
      from: actor.from,
      what,
    };
    try {
      await redis.connect();
      await audit.append(event);
    } catch {
      redis.disconnect();
      return;
    }
    pending = { audit, redis, event, open };
  });
  let failure: unknown;
  try {
    await runAs(actor, run);
  } catch (error) {
    failure = error;
  }
  if (pending) {
    let { audit, redis } = pending;
    const { event } = pending;
    if (redis.status === 'end') {
      // Redis went away while the command ran (it waited for it): this connection, which never
      // reconnects, is closed for good; the result goes through a new one
      ({ audit, redis } = pending.open());
    }
    try {
      if (redis.status === 'wait') await redis.connect();
      await audit.append({
        ...event,
        at: new Date().toISOString(),
        phase: 'result',
        what: { ...event.what, ...endedWhat(actor) },
        result: resultOf(actor, failure),
      });
    } finally {
      redis.disconnect();
    }
  }
  if (failure !== undefined) throw failure;
}
