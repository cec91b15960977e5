/** Helpers for the ingest tests: run an upload to the end, split it into awkward chunks. */
import {
  ingest,
  type IngestHeader,
  type IngestItem,
  type IngestOptions,
} from '../../src/ingest/index.js';
import type { IngestSource } from '../../src/ingest/index.js';
import { PorterError } from '../../src/errors/porter-error.js';

export type Record_ = Extract<IngestItem, { kind: 'record' }>;
export type Invalid = Extract<IngestItem, { kind: 'invalid' }>;

export interface Outcome {
  header?: IngestHeader;
  items: IngestItem[];
  error?: PorterError;
}

/** Runs an upload through ingest to the end; a PorterError ends it and is returned, not thrown. */
export async function runIngest(
  source: IngestSource,
  options: Partial<IngestOptions> = {},
): Promise<Outcome> {
  const items: IngestItem[] = [];
  const run = ingest(source, { resource: 'users', mode: 'upsert', ...options });
  try {
    for await (const item of run.items) items.push(item);
  } catch (error) {
    if (!(error instanceof PorterError)) throw error;
    const header = await run.header.catch(() => undefined);
    return { header, items, error };
  }
  return { header: await run.header, items };
}

/** Items of an upload that must end without a file-level error. */
export async function ingestItems(
  source: IngestSource,
  options: Partial<IngestOptions> = {},
): Promise<IngestItem[]> {
  const outcome = await runIngest(source, options);
  if (outcome.error !== undefined) throw outcome.error;
  return outcome.items;
}

/** The records (valid items) of an upload, asserting that none was invalid. */
export async function ingestRecords(
  source: IngestSource,
  options: Partial<IngestOptions> = {},
): Promise<Record_[]> {
  const items = await ingestItems(source, options);
  const invalid = items.filter((item): item is Invalid => item.kind === 'invalid');
  if (invalid.length > 0)
    throw new Error(`unexpected invalid items: ${invalid.map((item) => item.error).join('; ')}`);
  return items as Record_[];
}

/** The file-level error an upload must end with. */
export async function ingestError(
  source: IngestSource,
  options: Partial<IngestOptions> = {},
): Promise<PorterError> {
  const outcome = await runIngest(source, options);
  if (outcome.error === undefined) throw new Error('expected the upload to be refused');
  return outcome.error;
}

/** The bytes of `text` (or the bytes given) as chunks of `size` bytes, cutting anywhere. */
export async function* chunked(
  input: string | Uint8Array,
  size: number,
): AsyncGenerator<Uint8Array> {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  for (let offset = 0; offset < bytes.length; offset += size) {
    yield bytes.subarray(offset, offset + size);
  }
}
