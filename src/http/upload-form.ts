/**
 * A multipart upload: its option fields, read in the order the parts come, then its one file
 * part. The file streams into its import as it arrives, so only the fields before it can decide
 * how it is read: a field after it is refused (400 `PORTER_USAGE`), as a second file is, and the
 * import ends `failed` with nothing sent. Fields are taken from the parts themselves, never from
 * what the parser happened to have read when the file began, so the same fields count however
 * the body was cut into chunks on its way.
 */
import type { Readable } from 'node:stream';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { PorterError } from '../errors/porter-error.js';

export interface UploadForm {
  /** The option fields before the file part, by name. */
  fields: Record<string, string>;
  file: MultipartFile;
  /** The parts after the file part (there must be none). */
  rest: AsyncIterator<Multipart>;
}

const ONE_FILE = 'send one file per upload (a second file part came after the first)';

/** Reads the option fields up to the file part; refuses a field given twice. */
export async function readUploadForm(
  request: FastifyRequest,
  limits: { fileSize: number },
): Promise<UploadForm> {
  const parts = request.parts({ limits: { fileSize: limits.fileSize, files: 1 } });
  const iterator = parts[Symbol.asyncIterator]();
  const fields: Record<string, string> = {};
  for (;;) {
    const next = await iterator.next();
    if (next.done)
      throw new PorterError('PORTER_INPUT_EMPTY', 'the multipart upload has no file part');
    const part = next.value;
    if (part.type === 'file') return { fields, file: part, rest: iterator };
    if (Object.hasOwn(fields, part.fieldname)) {
      throw new PorterError(
        'PORTER_USAGE',
        `form field ${JSON.stringify(part.fieldname)} is given twice`,
        {
          details: { field: part.fieldname },
        },
      );
    }
    fields[part.fieldname] = String(part.value);
  }
}

/** The query's and the form's fields as one; a field given in both is refused. */
export function mergeFields(
  query: Record<string, unknown>,
  form: Record<string, string>,
): Record<string, unknown> {
  for (const name of Object.keys(form)) {
    if (Object.hasOwn(query, name)) {
      throw new PorterError(
        'PORTER_USAGE',
        `${JSON.stringify(name)} is given both as a query parameter and as a form field`,
        { details: { field: name } },
      );
    }
  }
  return { ...query, ...form };
}

/** Refuses any part after the file: a field there is too late, a second file is one too many. */
export async function refuseAfterFile(rest: AsyncIterator<Multipart>): Promise<void> {
  for (;;) {
    let next: IteratorResult<Multipart>;
    try {
      next = await rest.next();
    } catch (error) {
      // the body broke off, or went past the multipart limits: a second file among them
      if ((error as { code?: unknown }).code !== 'FST_FILES_LIMIT') throw error;
      throw new PorterError('PORTER_USAGE', ONE_FILE, { cause: error });
    }
    if (next.done) return;
    const part = next.value;
    if (part.type === 'file') {
      part.file.resume();
      throw new PorterError('PORTER_USAGE', ONE_FILE);
    }
    throw new PorterError(
      'PORTER_USAGE',
      `form field ${JSON.stringify(part.fieldname)} came after the file part; send every option field before the file`,
      { details: { field: part.fieldname } },
    );
  }
}

/** The file's bytes, then the check that nothing follows it. */
export async function* fileThenNothing(
  file: Readable,
  rest: AsyncIterator<Multipart>,
): AsyncGenerator<Buffer> {
  for await (const chunk of file) yield chunk as Buffer;
  await refuseAfterFile(rest);
}
