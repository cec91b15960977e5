/**
 * Active Directory's ranged attributes: a large `member` comes back as `member;range=0-1499`,
 * and the rest is read by asking for `member;range=1500-*` and so on until a range ends in `*`.
 * Every range is read, or the read fails: a group is never taken as whole when it is not.
 */
import type { Client, Entry } from 'ldapts';
import { attributeValues } from './entry-row.js';
import { pagedEntries } from './paged-search.js';
import { sourceFailed } from './ldap-session.js';
import type { LdapSource } from './sources.js';

const RANGE = /^([^;]+);range=(\d+)-(\d+|\*)$/i;

/** Most range reads of one attribute of one entry (1,500 values each). */
const MAX_RANGE_READS = 10_000;

/** Every value of `attribute` on an entry, reading further ranges from the directory. */
export async function allValues(
  client: Client,
  source: LdapSource,
  entry: Entry,
  attribute: string,
): Promise<string[]> {
  const wanted = attribute.toLowerCase();
  const plain = Object.keys(entry).find((key) => key.toLowerCase() === wanted);
  const values = plain === undefined ? [] : attributeValues(entry, plain);
  let ranged = rangedKey(entry, wanted);
  for (let reads = 0; ranged !== undefined; reads++) {
    values.push(...attributeValues(entry, ranged.key));
    if (ranged.end === '*') return values;
    if (reads >= MAX_RANGE_READS) {
      throw sourceFailed(source, `${entry.dn}: ${attribute} has more ranges than porter reads`);
    }
    const start = Number(ranged.end) + 1;
    let next: Entry | undefined;
    for await (const page of pagedEntries(client, source, {
      baseDN: entry.dn,
      scope: 'base',
      filter: '(objectClass=*)',
      attributes: [`${attribute};range=${start}-*`],
      pageSize: 0,
    })) {
      next = page[0] ?? next;
    }
    ranged = next === undefined ? undefined : rangedKey(next, wanted);
    if (ranged === undefined || Number(ranged.start) !== start) {
      throw sourceFailed(
        source,
        `${entry.dn}: the range of ${attribute} from ${start} did not come back; the group would be read in part`,
      );
    }
    entry = next!;
  }
  return values;
}

function rangedKey(
  entry: Entry,
  wanted: string,
): { key: string; start: string; end: string } | undefined {
  for (const key of Object.keys(entry)) {
    const match = RANGE.exec(key);
    if (match && match[1]!.toLowerCase() === wanted) {
      return { key, start: match[2]!, end: match[3]! };
    }
  }
  return undefined;
}
