/**
 * Reads one large JSON record (json-linear.test.ts runs this in a child process, with a
 * deadline) and prints what it read: `node --import tsx json-linear-probe.ts CASE`.
 */
import { ingest } from '../../src/ingest/index.js';
import { parseJsonText } from '../../src/ingest/json-value.js';

/** 16 MiB of text: eight million `\n` escapes. */
const ESCAPES = 8 * 1024 * 1024;
const STRINGS = 300_000;

async function main(which: string): Promise<unknown> {
  if (which === 'escapes') {
    const parsed = parseJsonText(`{"position":"${'\\n'.repeat(ESCAPES)}"}`);
    return { length: (parsed.value as { position: string }).position.length, expected: ESCAPES };
  }
  if (which === 'strings') {
    const pairs = Array.from({ length: STRINGS }, (_, index) => `"k${index}":"v"`);
    const parsed = parseJsonText(`{${pairs.join(',')},"last":"a\\"b"}`);
    const value = parsed.value as Record<string, string>;
    return { length: Object.keys(value).length, expected: STRINGS + 1, last: value.last };
  }
  const format = which as 'json' | 'ndjson';
  const record = `{"username":"alice","position":"${'\\n'.repeat(ESCAPES)}"}`;
  const run = ingest(format === 'json' ? `[${record}]` : `${record}\n`, {
    resource: 'users',
    mode: 'upsert',
    format,
    maxRecordBytes: 64 * 1024 * 1024,
  });
  const lengths: number[] = [];
  for await (const item of run.items) {
    lengths.push(String((item.input as { position?: unknown }).position).length);
  }
  return { length: lengths[0], expected: ESCAPES, items: lengths.length };
}

process.stdout.write(JSON.stringify(await main(process.argv[2] ?? '')));
