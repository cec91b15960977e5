/**
 * A paged search (RFC 2696) read to its end, page by page, or stopped with the reason: a size or
 * time limit, a referral porter cannot follow, a dropped connection, a page that errors. A
 * search that stops part way never looks like a complete one.
 */
import type { Client, Entry } from 'ldapts';
import { sourceFailed } from './ldap-session.js';
import type { LdapSource } from './sources.js';

export interface PagedSearch {
  baseDN: string;
  scope: 'sub' | 'one' | 'base';
  filter: string;
  attributes: readonly string[];
  /** Attributes read as bytes (objectGUID). */
  buffers?: readonly string[];
  /** Entries per page; 0 reads without the paging control (a base read). */
  pageSize: number;
}

/** The entries of a search, a page at a time; throws PORTER_SOURCE_FAILED unless read whole. */
export async function* pagedEntries(
  client: Client,
  source: LdapSource,
  search: PagedSearch,
): AsyncGenerator<Entry[]> {
  const where = `the search of ${search.baseDN} ${search.filter}`;
  const pages = client.searchPaginated(search.baseDN, {
    scope: search.scope,
    filter: search.filter,
    attributes: [...search.attributes],
    explicitBufferAttributes: [...(search.buffers ?? [])],
    timeLimit: source.timeLimit,
    paged: { pageSize: search.pageSize },
  });
  let page = 0;
  for (;;) {
    // the library would reconnect for the next page, unbound: a dropped connection ends the read
    if (page > 0 && (!client.isConnected || (source.bindDN !== undefined && !client.isBound))) {
      throw sourceFailed(source, `${where}: the connection dropped after page ${page}`);
    }
    let next: IteratorResult<{ searchEntries: Entry[]; searchReferences: string[] }>;
    try {
      next = await pages.next();
    } catch (error) {
      throw sourceFailed(source, `${where} stopped at page ${page + 1}`, error);
    }
    if (next.done) return;
    page++;
    const { searchEntries, searchReferences } = next.value;
    if (searchReferences.length > 0) {
      throw sourceFailed(
        source,
        `${where} returned a referral porter cannot follow (${searchReferences[0]}); point baseDN at the server that holds the entries`,
      );
    }
    yield searchEntries;
  }
}
