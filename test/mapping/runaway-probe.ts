/**
 * Runs a mapping whose expressions would hold a thread for minutes or more on the rows given,
 * through ingest, and prints each row's outcome and how many times the event loop turned
 * meanwhile (runaway-expressions.test.ts runs this in a child process, with a deadline).
 *
 *   node --import tsx runaway-probe.ts CASE
 */
import { ingest, loadMapping, type IngestItem } from '../../src/ingest/index.js';

const CASES: Record<string, { fields: Record<string, string>; cell: string; rows: number }> = {
  // polynomial: not refused when the mapping is read, stopped at the hard deadline
  regex: {
    fields: { position: "$contains(firstName, /a*a*a*a*a*a*a*a*a*b/) ? 'yes' : 'no'" },
    cell: `${'a'.repeat(5000)}c`,
    rows: 5,
  },
  // one JSONata step that builds a text far past the bounds before any check sees it
  pad: {
    fields: { position: "$length($pad('', 200000000, firstName)) > 0 ? 'long' : 'short'" },
    cell: 'x',
    rows: 4,
  },
  // a date format whose one-or-two-digit parts touch: the digits can split in 2^40 ways
  date: {
    fields: { position: `$parseDate(firstName, '${'MD'.repeat(20)}')` },
    cell: `${'1'.repeat(70)}x`,
    rows: 2,
  },
};

async function main(which: string): Promise<unknown> {
  const chosen = CASES[which]!;
  const mapping = loadMapping(
    { fields: { username: "'u' & $string($row)", ...chosen.fields } },
    'users',
  );
  const rows = Array.from({ length: chosen.rows }, () => chosen.cell);
  const text = `firstName,other\n${rows.map((cell) => `${cell},x`).join('\n')}\n`;
  let turns = 0;
  const ticker = setInterval(() => turns++, 10);
  const items: IngestItem[] = [];
  try {
    for await (const item of ingest(text, { resource: 'users', mode: 'upsert', mapping }).items) {
      items.push(item);
    }
  } finally {
    clearInterval(ticker);
  }
  return {
    turns,
    outcomes: items.map((item) =>
      item.kind === 'invalid'
        ? { key: item.key, field: item.field, error: item.error }
        : { kind: item.kind },
    ),
  };
}

process.stdout.write(JSON.stringify(await main(process.argv[2] ?? '')));
