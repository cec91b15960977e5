/**
 * Named targets: every admin server porter may reach, by name. They come from the targets file
 * (PORTER_TARGETS_FILE) and from the ADMIN_* variables, which make the target `default` unless
 * the file names one. Every process reads the same configuration; a job carries its target's
 * name and fingerprint, and runs against that target only.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, dirname, resolve } from 'node:path';
import type { AdminClientOptions } from '../admin/client.js';
import type { Env } from '../config/env.js';
import { PorterError } from '../errors/porter-error.js';
import { targetFingerprint } from './fingerprint.js';
import {
  TARGET_NAME,
  TARGET_NAME_TEXT,
  targetsFileSchema,
  type SecretSource,
  type TargetEntry,
} from './target-file.js';

export const DEFAULT_TARGET = 'default';

/** What may be shown of a target: never a secret, only where it is read from. */
export interface TargetSummary {
  name: string;
  url: string;
  description?: string;
  /** `apiKey`, `basic`, `params` or `none`. */
  auth: 'apiKey' | 'basic' | 'params' | 'none';
  user?: string;
  /** Where each secret is read from, e.g. `env:NEW_DAM_KEY`. */
  secrets: string[];
  maxRps: number;
  maxInFlight?: number;
  readOnly: boolean;
  /** Four eyes on its plans, when the targets file says (see target-file.ts). */
  requireApproval?: boolean;
  fingerprint: string;
  /** Where the target was defined: the targets file or the ADMIN_* variables. */
  from: 'file' | 'environment';
  /** Why the target cannot be used (a secret that cannot be read), if so. */
  problem?: string;
}

/** A target as a process uses it. */
export interface Target {
  readonly name: string;
  readonly summary: TargetSummary;
  /** The admin client's options, secrets read; absent when a secret could not be read. */
  readonly client?: AdminClientOptions;
  /** The user porter signs in as: a sync never touches it. */
  readonly selfUser?: string;
  readonly maxRps: number;
  readonly maxInFlight?: number;
  readonly readOnly: boolean;
  readonly fingerprint: string;
}

/** A secret read from its source, or why it could not be. */
function readSecret(
  source: SecretSource,
  env: NodeJS.ProcessEnv,
  baseDir: string,
): { value?: string; problem?: string; label: string } {
  if ('env' in source) {
    const value = env[source.env];
    return value === undefined || value === ''
      ? { label: `env:${source.env}`, problem: `environment variable ${source.env} is not set` }
      : { label: `env:${source.env}`, value };
  }
  const path = isAbsolute(source.file) ? source.file : resolve(baseDir, source.file);
  try {
    const value = readFileSync(path, 'utf8').split(/\r?\n/, 1)[0] ?? '';
    return value === ''
      ? { label: `file:${source.file}`, problem: `secret file ${source.file} is empty` }
      : { label: `file:${source.file}`, value };
  } catch {
    return { label: `file:${source.file}`, problem: `secret file ${source.file} cannot be read` };
  }
}

function authKind(entry: TargetEntry): TargetSummary['auth'] {
  if (entry.apiKey) return 'apiKey';
  if (entry.user !== undefined) return entry.authMode ?? 'basic';
  return 'none';
}

/** The URL with any credentials in it left out, for messages and listings. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '[invalid url]';
  }
}

interface ReadSecrets {
  apiKey?: string;
  password?: string;
  headers: Record<string, string>;
  /** Where each secret was read from. */
  labels: string[];
  problems: string[];
}

/** Reads a file entry's secrets from their sources. */
function readSecrets(entry: TargetEntry, env: NodeJS.ProcessEnv, baseDir: string): ReadSecrets {
  const read: ReadSecrets = { headers: {}, labels: [], problems: [] };
  const secret = (source: SecretSource | undefined): string | undefined => {
    if (!source) return undefined;
    const one = readSecret(source, env, baseDir);
    read.labels.push(one.label);
    if (one.problem) read.problems.push(one.problem);
    return one.value;
  };
  read.apiKey = secret(entry.apiKey);
  read.password = secret(entry.password);
  for (const [header, value] of Object.entries(entry.headers ?? {})) {
    const text = typeof value === 'string' ? value : secret(value);
    if (text !== undefined) read.headers[header] = text;
  }
  return read;
}

interface TargetDefaults {
  maxRps: number;
  timeoutMs: number;
  connectTimeoutMs: number;
}

function buildTarget(
  name: string,
  entry: TargetEntry,
  from: TargetSummary['from'],
  secrets: ReadSecrets,
  defaults: TargetDefaults,
): Target {
  const auth = authKind(entry);
  const fingerprint = targetFingerprint(entry.url, {
    auth,
    user: entry.user,
    apiKey: entry.apiKey,
  });
  const maxRps = entry.maxRps ?? defaults.maxRps;
  const summary: TargetSummary = {
    name,
    url: displayUrl(entry.url),
    ...(entry.description ? { description: entry.description } : {}),
    auth,
    ...(entry.user !== undefined ? { user: entry.user } : {}),
    secrets: secrets.labels,
    maxRps,
    ...(entry.maxInFlight !== undefined ? { maxInFlight: entry.maxInFlight } : {}),
    readOnly: entry.readOnly === true,
    ...(entry.requireApproval !== undefined ? { requireApproval: entry.requireApproval } : {}),
    fingerprint,
    from,
    ...(secrets.problems.length > 0 ? { problem: secrets.problems.join('; ') } : {}),
  };
  const client: AdminClientOptions | undefined =
    secrets.problems.length > 0
      ? undefined
      : {
          baseUrl: entry.url,
          auth: {
            apiKey: secrets.apiKey,
            user: entry.user,
            password: secrets.password,
            userPasswordMode: entry.authMode ?? 'basic',
          },
          requestTimeoutMs: entry.timeoutMs ?? defaults.timeoutMs,
          connectTimeoutMs: entry.connectTimeoutMs ?? defaults.connectTimeoutMs,
          headers: secrets.headers,
        };
  return {
    name,
    summary,
    client,
    selfUser: entry.user,
    maxRps,
    maxInFlight: entry.maxInFlight,
    readOnly: entry.readOnly === true,
    fingerprint,
  };
}

/** The target `default` from the ADMIN_* variables, as porter has always read them. */
function environmentTarget(env: Env): Target {
  const entry: TargetEntry = {
    url: env.ADMIN_BASE_URL,
    ...(env.ADMIN_API_KEY ? { apiKey: { env: 'ADMIN_API_KEY' } } : {}),
    ...(env.ADMIN_USER !== undefined
      ? { user: env.ADMIN_USER, password: { env: 'ADMIN_PASSWORD' } }
      : {}),
    authMode: env.ADMIN_AUTH_MODE,
  };
  const labels = [
    ...(env.ADMIN_API_KEY ? ['env:ADMIN_API_KEY'] : []),
    ...(env.ADMIN_USER !== undefined ? ['env:ADMIN_PASSWORD'] : []),
  ];
  return buildTarget(
    DEFAULT_TARGET,
    entry,
    'environment',
    {
      apiKey: env.ADMIN_API_KEY,
      password: env.ADMIN_PASSWORD,
      headers: env.ADMIN_EXTRA_HEADERS,
      labels,
      problems: [],
    },
    {
      maxRps: env.PORTER_MAX_RPS,
      timeoutMs: env.ADMIN_TIMEOUT_MS,
      connectTimeoutMs: env.ADMIN_CONNECT_TIMEOUT_MS,
    },
  );
}

/** Every target of a process, by name. */
export class TargetSet {
  private readonly byName: Map<string, Target>;

  constructor(targets: Iterable<Target>) {
    this.byName = new Map([...targets].map((target) => [target.name, target]));
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  list(): Target[] {
    return [...this.byName.values()];
  }

  get(name: string): Target | undefined {
    return this.byName.get(name);
  }

  /** The target, or PORTER_TARGET_UNKNOWN naming the ones there are. */
  require(name: string): Target {
    const target = this.byName.get(name);
    if (target) return target;
    throw new PorterError(
      'PORTER_TARGET_UNKNOWN',
      `no target "${name}" is configured here (known: ${this.names().join(', ') || 'none'}); targets come from PORTER_TARGETS_FILE and the ADMIN_* variables`,
      { details: { target: name } },
    );
  }
}

/** Checks a target name given on a command line or in a request. */
export function checkTargetName(name: string, what = '--target'): string {
  if (!TARGET_NAME.test(name)) {
    throw new PorterError(
      'PORTER_USAGE',
      `${what}: "${name.slice(0, 60)}" is not a target name (${TARGET_NAME_TEXT})`,
    );
  }
  return name;
}

/**
 * The targets of this process: the targets file's, and `default` from the ADMIN_* variables
 * unless the file defines it. A file that cannot be read or is not valid stops start-up with
 * PORTER_CONFIG_INVALID naming the target and field.
 */
export function loadTargets(env: Env, source: NodeJS.ProcessEnv = process.env): TargetSet {
  const targets: Target[] = [];
  const path = env.PORTER_TARGETS_FILE;
  if (path !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code ? 'cannot be read' : 'is not valid JSON';
      throw new PorterError('PORTER_CONFIG_INVALID', `PORTER_TARGETS_FILE: ${path} ${why}`, {
        details: { field: 'PORTER_TARGETS_FILE' },
      });
    }
    const parsed = targetsFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.map(String).join('.') || '(file)';
      throw new PorterError(
        'PORTER_CONFIG_INVALID',
        `PORTER_TARGETS_FILE: ${where}: ${issue?.message ?? 'invalid'}`,
        { details: { field: 'PORTER_TARGETS_FILE' } },
      );
    }
    const baseDir = dirname(resolve(path));
    for (const [name, entry] of Object.entries(parsed.data)) {
      targets.push(
        buildTarget(name, entry, 'file', readSecrets(entry, source, baseDir), {
          maxRps: 0,
          timeoutMs: env.ADMIN_TIMEOUT_MS,
          connectTimeoutMs: env.ADMIN_CONNECT_TIMEOUT_MS,
        }),
      );
    }
  }
  if (!targets.some((target) => target.name === DEFAULT_TARGET)) {
    targets.unshift(environmentTarget(env));
  }
  return new TargetSet(targets);
}
