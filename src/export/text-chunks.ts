/** Joins many small strings into chunks of about 64 KiB, so a file is written in few calls. */
const CHUNK_CHARS = 64 * 1024;

/** The parts joined into chunks of about `chunkChars` characters. */
export async function* batchText(
  parts: AsyncIterable<string>,
  chunkChars = CHUNK_CHARS,
): AsyncGenerator<string> {
  let pending: string[] = [];
  let length = 0;
  for await (const part of parts) {
    pending.push(part);
    length += part.length;
    if (length >= chunkChars) {
      yield pending.join('');
      pending = [];
      length = 0;
    }
  }
  if (pending.length > 0) yield pending.join('');
}
