/**
 * Time and memory of reading a directory source: a full read of 20,000 users (pages of 500) from
 * a real slapd started here, then an incremental read after 10 entries changed. Prints figures;
 * asserts nothing. Run: npx tsx bench/directory-read.ts [users]
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Attribute, Change } from 'ldapts';
import { readSource } from '../src/sources/read-source.js';
import { loadSources } from '../src/sources/sources.js';
import { BASE_DN, PORTER_DN, personLdif, startSlapd, userDn } from '../test/helpers/slapd.js';

const users = Number(process.argv[2] ?? 20_000);
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const ldif = Array.from({ length: users }, (_, index) => personLdif(`user${index}`)).join('\n\n');
  const slapd = await startSlapd({ ldif });
  try {
    process.env.BENCH_LDAP_PASSWORD = 'porter-secret';
    const file = join(slapd.dir, 'sources.json');
    await writeFile(
      file,
      JSON.stringify({
        dir: {
          kind: 'ldap',
          url: slapd.url,
          bindDN: PORTER_DN,
          password: { env: 'BENCH_LDAP_PASSWORD' },
          baseDN: `ou=people,${BASE_DN}`,
          attributes: ['uid', 'givenName', 'sn', 'mail', 'cn'],
          pageSize: 500,
        },
      }),
    );
    const source = loadSources({ PORTER_SOURCES_FILE: file }).require('dir');
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const cpuBefore = process.cpuUsage();
    const full = await readSource(source, 'users');
    const cpuFull = process.cpuUsage(cpuBefore);
    const heapFull = process.memoryUsage().heapUsed - heapBefore;
    console.log(
      `full read: ${full.entries} entries in ${full.durationMs} ms, CPU ${Math.round((cpuFull.user + cpuFull.system) / 1000)} ms, ` +
        `rows held ${mib(heapFull)} of heap, rss ${mib(process.memoryUsage().rss)}`,
    );
    // the change time has a resolution of a second: start the changes in a second of their own
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const since = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
    const admin = await slapd.admin();
    for (let index = 0; index < 10; index++) {
      await admin.modify(
        userDn(`user${index * 997}`),
        new Change({
          operation: 'replace',
          modification: new Attribute({ type: 'givenName', values: [`changed${index}`] }),
        }),
      );
    }
    await admin.unbind();
    const incremental = await readSource(source, 'users', { since });
    console.log(
      `incremental read since ${since}: ${incremental.entries} entries in ${incremental.durationMs} ms, rss ${mib(process.memoryUsage().rss)}`,
    );
  } finally {
    await slapd.close();
  }
}

await main();
