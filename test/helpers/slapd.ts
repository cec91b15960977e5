/**
 * An OpenLDAP slapd started from the Debian binary on a free port, with a slapd.conf generated
 * in a directory of its own (an mdb database under dc=example,dc=org, entries loaded with
 * slapadd before it starts), optionally StartTLS with a test CA made by openssl and a size
 * limit. A read-only user `cn=porter` binds with password `porter-secret`. No Docker needed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'ldapts';
import { freePort } from '../../src/util/free-port.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);

export const BASE_DN = 'dc=example,dc=org';
export const ADMIN_DN = `cn=admin,${BASE_DN}`;
export const ADMIN_PASSWORD = 'admin-secret';
export const PORTER_DN = `cn=porter,${BASE_DN}`;
export const PORTER_PASSWORD = 'porter-secret';

export interface SlapdOptions {
  /** LDIF entries below the base (ou=people, ou=groups and cn=porter are always there). */
  ldif?: string;
  /** slapd's sizelimit for every user but the rootdn. @defaultValue unlimited */
  sizeLimit?: number;
  /** Generate a test CA and a server certificate, and offer StartTLS. */
  tls?: boolean;
}

export interface TestSlapd {
  url: string;
  port: number;
  dir: string;
  /** The test CA's PEM file, with `tls`. */
  caFile?: string;
  child: ChildProcess;
  /** A client bound as the rootdn (to change entries); the caller unbinds it. */
  admin(): Promise<Client>;
  /** Stops slapd at once (SIGKILL), as a crash or a pulled cable would. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

function baseLdif(): string {
  return [
    `dn: ${BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
    `dn: ou=people,${BASE_DN}\nobjectClass: organizationalUnit\nou: people`,
    `dn: ou=groups,${BASE_DN}\nobjectClass: organizationalUnit\nou: groups`,
    `dn: ${PORTER_DN}\nobjectClass: simpleSecurityObject\nobjectClass: organizationalRole\ncn: porter\nuserPassword: ${PORTER_PASSWORD}`,
  ].join('\n\n');
}

/** One inetOrgPerson as LDIF. */
export function personLdif(uid: string, fields: Record<string, string> = {}): string {
  const lines = [
    `dn: uid=${uid},ou=people,${BASE_DN}`,
    'objectClass: inetOrgPerson',
    `uid: ${uid}`,
    `cn: ${fields.cn ?? uid}`,
    `sn: ${fields.sn ?? uid}`,
    `givenName: ${fields.givenName ?? uid}`,
    `mail: ${fields.mail ?? `${uid}@example.org`}`,
  ];
  return lines.join('\n');
}

/** One groupOfNames as LDIF; `members` are DNs. */
export function groupLdif(cn: string, members: readonly string[]): string {
  return [
    `dn: cn=${cn},ou=groups,${BASE_DN}`,
    'objectClass: groupOfNames',
    `cn: ${cn}`,
    ...members.map((member) => `member: ${member}`),
  ].join('\n');
}

export function userDn(uid: string): string {
  return `uid=${uid},ou=people,${BASE_DN}`;
}

export function groupDn(cn: string): string {
  return `cn=${cn},ou=groups,${BASE_DN}`;
}

async function makeCertificates(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const cert = join(dir, 'server.pem');
  const ext = join(dir, 'server.ext');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    caKey,
    '-out',
    ca,
    '-subj',
    '/CN=porter test CA',
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    '/CN=localhost',
  ]);
  await writeFile(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
    '-extfile',
    ext,
  ]);
  return { ca, cert, key };
}

/** Starts slapd with the entries loaded, and resolves once it answers a bind. */
export async function startSlapd(options: SlapdOptions = {}): Promise<TestSlapd> {
  const dir = await mkdtemp(join(tmpdir(), 'porter-slapd-'));
  const dbDir = join(dir, 'db');
  await run('mkdir', ['-p', dbDir]);
  const certs = options.tls ? await makeCertificates(dir) : undefined;
  const conf = join(dir, 'slapd.conf');
  await writeFile(
    conf,
    [
      'include /etc/ldap/schema/core.schema',
      'include /etc/ldap/schema/cosine.schema',
      'include /etc/ldap/schema/inetorgperson.schema',
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${join(dir, 'slapd.pid')}`,
      `argsfile ${join(dir, 'slapd.args')}`,
      ...(certs
        ? [
            `TLSCACertificateFile ${certs.ca}`,
            `TLSCertificateFile ${certs.cert}`,
            `TLSCertificateKeyFile ${certs.key}`,
          ]
        : []),
      `sizelimit ${options.sizeLimit ?? 'unlimited'}`,
      'database mdb',
      'maxsize 1073741824',
      `suffix "${BASE_DN}"`,
      `rootdn "${ADMIN_DN}"`,
      `rootpw ${ADMIN_PASSWORD}`,
      `directory ${dbDir}`,
      'index objectClass eq',
      'index uid,cn eq',
      'index entryUUID eq',
      'index modifyTimestamp eq',
      'access to attrs=userPassword by anonymous auth by * none',
      'access to * by users read by * none',
      '',
    ].join('\n'),
  );
  const ldif = [baseLdif(), options.ldif ?? ''].filter(Boolean).join('\n\n') + '\n';
  const ldifFile = join(dir, 'seed.ldif');
  await writeFile(ldifFile, ldif);
  await run('/usr/sbin/slapadd', ['-q', '-f', conf, '-l', ldifFile], { maxBuffer: 1 << 24 });
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child = spawn('/usr/sbin/slapd', ['-d', '0', '-f', conf, '-h', `${url}/`], {
    stdio: 'ignore',
  });
  const bindable = async (): Promise<true | undefined> => {
    const client = new Client({ url, connectTimeout: 1000 });
    try {
      await client.bind(PORTER_DN, PORTER_PASSWORD);
      return true;
    } catch {
      return undefined;
    } finally {
      await client.unbind().catch(() => undefined);
    }
  };
  await waitFor(bindable, { timeoutMs: 30_000, what: `slapd on ${port}` });
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  };
  return {
    url,
    port,
    dir,
    caFile: certs?.ca,
    child,
    async admin() {
      const client = new Client({ url });
      await client.bind(ADMIN_DN, ADMIN_PASSWORD);
      return client;
    },
    kill,
    async close() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
