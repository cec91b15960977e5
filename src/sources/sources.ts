/**
 * Named sources: the directories porter may read rows from, by name, from PORTER_SOURCES_FILE.
 * Secrets (the bind password) are read from their sources when the process starts and never
 * shown; a source whose secret cannot be read is listed with the problem and refused when used.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Env } from '../config/env.js';
import { PorterError } from '../errors/porter-error.js';
import { displayUrl, readSecret } from '../targets/targets.js';
import { RegularFileError, readRegularFileSync } from '../util/regular-file.js';
import { sourcesFileSchema, type LdapSourceEntry } from './source-file.js';

const MAX_SOURCES_FILE_BYTES = 1024 * 1024;
const MAX_CA_FILE_BYTES = 256 * 1024;

export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_NESTING_DEPTH = 8;

/** What may be shown of a source: never a secret, only where it is read from. */
export interface SourceSummary {
  name: string;
  kind: 'ldap';
  flavor: 'openldap' | 'ad';
  url: string;
  description?: string;
  startTLS: boolean;
  bindDN?: string;
  /** Where the password is read from, e.g. `env:LDAP_PASSWORD`. */
  secrets: string[];
  baseDN: string;
  filter: string;
  pageSize: number;
  anchorAttribute: string;
  groups: boolean;
  /** Why the source cannot be used (a secret or CA file that cannot be read), if so. */
  problem?: string;
}

/** A source as a process uses it: settings complete, secrets read. */
export interface LdapSource {
  readonly name: string;
  readonly summary: SourceSummary;
  readonly entry: LdapSourceEntry;
  readonly flavor: 'openldap' | 'ad';
  readonly url: string;
  readonly startTLS: boolean;
  readonly bindDN?: string;
  readonly password?: string;
  /** The CA's PEM, when the file names one. */
  readonly ca?: string;
  readonly baseDN: string;
  readonly scope: 'sub' | 'one';
  readonly filter: string;
  readonly pageSize: number;
  readonly attributes: readonly string[];
  readonly anchorAttribute: string;
  /** The attribute that tells when an entry last changed (incremental reads). */
  readonly changedAttribute: string;
  readonly timeLimit: number;
  readonly timeoutMs?: number;
  readonly connectTimeoutMs?: number;
  readonly groups?: {
    readonly baseDN: string;
    readonly scope: 'sub' | 'one';
    readonly filter: string;
    readonly memberAttribute: string;
    readonly nameAttribute: string;
    readonly attributes: readonly string[];
    readonly nestingDepth: number;
  };
  readonly problem?: string;
}

function buildSource(name: string, entry: LdapSourceEntry, baseDir: string): LdapSource {
  const flavor = entry.flavor ?? 'openldap';
  const problems: string[] = [];
  const secrets: string[] = [];
  let password: string | undefined;
  if (entry.password) {
    const read = readSecret(
      entry.password,
      process.env,
      baseDir,
      `${name}.password`,
      'PORTER_SOURCES_FILE',
    );
    secrets.push(read.label);
    if (read.problem) problems.push(read.problem);
    password = read.value;
  }
  let ca: string | undefined;
  if (entry.ca) {
    const path = isAbsolute(entry.ca.file) ? entry.ca.file : resolve(baseDir, entry.ca.file);
    try {
      ca = readRegularFileSync(path, MAX_CA_FILE_BYTES).toString('utf8');
    } catch {
      problems.push(`CA file ${entry.ca.file} cannot be read`);
    }
  }
  const filter =
    entry.filter ??
    (flavor === 'ad'
      ? '(&(objectCategory=person)(objectClass=user))'
      : '(objectClass=inetOrgPerson)');
  const anchorAttribute = entry.anchorAttribute ?? (flavor === 'ad' ? 'objectGUID' : 'entryUUID');
  const pageSize = entry.pageSize ?? DEFAULT_PAGE_SIZE;
  const summary: SourceSummary = {
    name,
    kind: 'ldap',
    flavor,
    url: displayUrl(entry.url),
    ...(entry.description ? { description: entry.description } : {}),
    startTLS: entry.startTLS === true,
    ...(entry.bindDN !== undefined ? { bindDN: entry.bindDN } : {}),
    secrets,
    baseDN: entry.baseDN,
    filter,
    pageSize,
    anchorAttribute,
    groups: entry.groups !== undefined,
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
  };
  const groups = entry.groups;
  return {
    name,
    summary,
    entry,
    flavor,
    url: entry.url,
    startTLS: entry.startTLS === true,
    bindDN: entry.bindDN,
    password,
    ca,
    baseDN: entry.baseDN,
    scope: entry.scope ?? 'sub',
    filter,
    pageSize,
    attributes: entry.attributes,
    anchorAttribute,
    changedAttribute: flavor === 'ad' ? 'whenChanged' : 'modifyTimestamp',
    timeLimit: entry.timeLimit ?? 0,
    timeoutMs: entry.timeoutMs,
    connectTimeoutMs: entry.connectTimeoutMs,
    ...(groups
      ? {
          groups: {
            baseDN: groups.baseDN ?? entry.baseDN,
            scope: groups.scope ?? 'sub',
            filter: groups.filter ?? '(|(objectClass=groupOfNames)(objectClass=group))',
            memberAttribute: groups.memberAttribute ?? 'member',
            nameAttribute: groups.nameAttribute ?? 'cn',
            attributes: groups.attributes ?? [],
            nestingDepth: groups.nestingDepth ?? DEFAULT_NESTING_DEPTH,
          },
        }
      : {}),
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
  };
}

/** Every source of a process, by name. */
export class SourceSet {
  private readonly byName: Map<string, LdapSource>;

  constructor(sources: Iterable<LdapSource>) {
    this.byName = new Map([...sources].map((source) => [source.name, source]));
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  list(): LdapSource[] {
    return [...this.byName.values()];
  }

  /** The source as configured, usable or not; PORTER_SOURCE_UNKNOWN when none has the name. */
  named(name: string): LdapSource {
    const source = this.byName.get(name);
    if (!source) {
      throw new PorterError(
        'PORTER_SOURCE_UNKNOWN',
        `no source "${name}" is configured here (known: ${this.names().join(', ') || 'none'}); sources come from PORTER_SOURCES_FILE`,
        { details: { source: name } },
      );
    }
    return source;
  }

  /** The source, usable (its secrets read), or PORTER_SOURCE_UNKNOWN saying why not. */
  require(name: string): LdapSource {
    const source = this.named(name);
    if (source.problem) {
      throw new PorterError(
        'PORTER_SOURCE_UNKNOWN',
        `source "${name}" cannot be used here: ${source.problem}`,
        { details: { source: name } },
      );
    }
    return source;
  }
}

/**
 * The sources of this process (none without PORTER_SOURCES_FILE). A file that cannot be read
 * or is not valid stops start-up with PORTER_CONFIG_INVALID naming the source and field.
 */
export function loadSources(env: Pick<Env, 'PORTER_SOURCES_FILE'>): SourceSet {
  const path = env.PORTER_SOURCES_FILE;
  if (path === undefined) return new SourceSet([]);
  let json: unknown;
  try {
    json = JSON.parse(readRegularFileSync(path, MAX_SOURCES_FILE_BYTES).toString('utf8'));
  } catch (error) {
    const why = error instanceof RegularFileError ? error.message : 'is not valid JSON';
    throw new PorterError('PORTER_CONFIG_INVALID', `PORTER_SOURCES_FILE: ${path} ${why}`, {
      details: { field: 'PORTER_SOURCES_FILE' },
    });
  }
  const parsed = sourcesFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') || '(file)';
    throw new PorterError(
      'PORTER_CONFIG_INVALID',
      `PORTER_SOURCES_FILE: ${where}: ${issue?.message ?? 'invalid'}`,
      { details: { field: 'PORTER_SOURCES_FILE' } },
    );
  }
  const baseDir = dirname(resolve(path));
  return new SourceSet(
    Object.entries(parsed.data).map(([name, entry]) => buildSource(name, entry, baseDir)),
  );
}
