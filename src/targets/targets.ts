/**
 * Named targets: every admin server porter may reach, by name. They come from the targets file
 * (PORTER_TARGETS_FILE) and from the ADMIN_* variables, which make the target `default` unless
 * the file names one. Every process reads the same configuration; a job carries its target's
 * name and fingerprint, and runs against that target only.
 */
import { isAbsolute, dirname, resolve } from 'node:path';
import type { AdminClientOptions } from '../admin/client.js';
import type { Env } from '../config/env.js';
import { PorterError } from '../errors/porter-error.js';
import { RegularFileError, readRegularFileSync } from '../util/regular-file.js';
import { targetFingerprint } from './fingerprint.js';
import {
  TARGET_NAME,
  TARGET_NAME_TEXT,
  targetsFileSchema,
  type SecretSource,
  type TargetEntry,
} from './target-file.js';

export const DEFAULT_TARGET = 'default';

/** Where `default` points with no targets file and no ADMIN_BASE_URL: the sandbox. */
export const SANDBOX_URL = 'http://127.0.0.1:8080';

/** The largest targets file porter reads. */
export const MAX_TARGETS_FILE_BYTES = 1024 * 1024;
/** The largest secret file porter reads (a key, a password, a header's value). */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

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
  /** SCIM settings of the targets file, when it gives them. */
  scim?: { maxDeletesPerHour?: number; protect?: string[] };
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

/**
 * A secret read from its source, or why it could not be. A secret file that is missing or
 * unreadable makes its target unusable (it may be mounted later); one that is not a regular
 * file, or is larger than MAX_SECRET_FILE_BYTES, is a configuration error that stops start-up.
 */
export function readSecret(
  source: SecretSource,
  env: NodeJS.ProcessEnv,
  baseDir: string,
  where: string,
  variable = 'PORTER_TARGETS_FILE',
): { value?: string; problem?: string; label: string } {
  if ('env' in source) {
    const value = env[source.env];
    return value === undefined || value === ''
      ? { label: `env:${source.env}`, problem: `environment variable ${source.env} is not set` }
      : { label: `env:${source.env}`, value };
  }
  const path = isAbsolute(source.file) ? source.file : resolve(baseDir, source.file);
  const label = `file:${source.file}`;
  let content: Buffer;
  try {
    content = readRegularFileSync(path, MAX_SECRET_FILE_BYTES);
  } catch (error) {
    if (
      error instanceof RegularFileError &&
      (error.problem === 'not-regular' || error.problem === 'too-large')
    ) {
      throw new PorterError(
        'PORTER_CONFIG_INVALID',
        `${variable}: ${where}: secret file ${source.file} ${error.message}`,
        { details: { field: variable } },
      );
    }
    return { label, problem: `secret file ${source.file} cannot be read` };
  }
  const value = content.toString('utf8').split(/\r?\n/, 1)[0] ?? '';
  return value === ''
    ? { label, problem: `secret file ${source.file} is empty` }
    : { label, value };
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
function readSecrets(
  name: string,
  entry: TargetEntry,
  env: NodeJS.ProcessEnv,
  baseDir: string,
): ReadSecrets {
  const read: ReadSecrets = { headers: {}, labels: [], problems: [] };
  const secret = (source: SecretSource | undefined, field: string): string | undefined => {
    if (!source) return undefined;
    const one = readSecret(source, env, baseDir, `${name}.${field}`);
    read.labels.push(one.label);
    if (one.problem) read.problems.push(one.problem);
    return one.value;
  };
  read.apiKey = secret(entry.apiKey, 'apiKey');
  read.password = secret(entry.password, 'password');
  for (const [header, value] of Object.entries(entry.headers ?? {})) {
    const text = typeof value === 'string' ? value : secret(value, `headers.${header}`);
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
    ...(entry.scim !== undefined ? { scim: entry.scim } : {}),
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
    url: env.ADMIN_BASE_URL ?? SANDBOX_URL,
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

  /**
   * The target a command or request names, or `default` when it names none. With no `default`
   * configured (a targets file that names none, and no ADMIN_BASE_URL), naming none is a
   * wrong argument: PORTER_USAGE naming the targets there are. A name that is not configured
   * is PORTER_TARGET_UNKNOWN.
   */
  resolve(name: string | undefined): Target {
    if (name !== undefined) return this.require(name);
    const target = this.byName.get(DEFAULT_TARGET);
    if (target) return target;
    throw new PorterError(
      'PORTER_USAGE',
      `name a target (--target NAME, or "target" in a request): there is no target "default" here (configured: ${this.names().join(', ') || 'none'})`,
      { details: { targets: this.names() } },
    );
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
 * unless the file defines it. Beside a targets file, `default` comes from the variables only
 * when ADMIN_BASE_URL is set; with no targets file it is always there (the sandbox when
 * ADMIN_BASE_URL is unset), so a fresh checkout works. A file that cannot be read or is not
 * valid stops start-up with PORTER_CONFIG_INVALID naming the target and field.
 */
export function loadTargets(env: Env, source: NodeJS.ProcessEnv = process.env): TargetSet {
  const targets: Target[] = [];
  const path = env.PORTER_TARGETS_FILE;
  if (path !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(readRegularFileSync(path, MAX_TARGETS_FILE_BYTES).toString('utf8'));
    } catch (error) {
      const why = error instanceof RegularFileError ? error.message : 'is not valid JSON';
      throw new PorterError('PORTER_CONFIG_INVALID', `PORTER_TARGETS_FILE: ${path} ${why}`, {
        details: { field: 'PORTER_TARGETS_FILE' },
      });
    }
    const parsed = targetsFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.map(String).join('.') || '(file)';
      // a bad name: say the rule names follow, not only that the key is refused
      const inner = issue?.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
      const why = inner ? `not a target name (${inner})` : (issue?.message ?? 'invalid');
      throw new PorterError('PORTER_CONFIG_INVALID', `PORTER_TARGETS_FILE: ${where}: ${why}`, {
        details: { field: 'PORTER_TARGETS_FILE' },
      });
    }
    const baseDir = dirname(resolve(path));
    for (const [name, entry] of Object.entries(parsed.data)) {
      targets.push(
        buildTarget(name, entry, 'file', readSecrets(name, entry, source, baseDir), {
          maxRps: 0,
          timeoutMs: env.ADMIN_TIMEOUT_MS,
          connectTimeoutMs: env.ADMIN_CONNECT_TIMEOUT_MS,
        }),
      );
    }
  }
  const fromEnvironment = path === undefined || env.ADMIN_BASE_URL !== undefined;
  if (fromEnvironment && !targets.some((target) => target.name === DEFAULT_TARGET)) {
    targets.unshift(environmentTarget(env));
  }
  return new TargetSet(targets);
}
