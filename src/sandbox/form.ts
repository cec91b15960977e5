/**
 * Request bodies: the spec sends records as form-data, so both form encodings are read
 * into one map of field name → text. Any other content type is refused with 415.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Response } from 'undici';
import { badRequest } from './errors.js';

/** Form fields of a request body; the first value wins when a name repeats. */
export type FormFields = Map<string, string>;

/** Registers the multipart and urlencoded parsers on the app. */
export function registerFormParsers(app: FastifyInstance): void {
  // Bodies of other types get fastify's 415, which the error handler turns into UNSUPPORTED_MEDIA_TYPE.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer' },
    (_request, body: Buffer, done) => {
      const fields: FormFields = new Map();
      for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
        if (!fields.has(name)) fields.set(name, value);
      }
      done(null, fields);
    },
  );
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer' },
    async (request: FastifyRequest, body: Buffer) =>
      parseMultipart(body, String(request.headers['content-type'])),
  );
}

/** Reads the fields of a multipart/form-data body; file parts are read as UTF-8 text. */
async function parseMultipart(body: Buffer, contentType: string): Promise<FormFields> {
  let data: Awaited<ReturnType<Response['formData']>>;
  try {
    data = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw badRequest(`malformed multipart/form-data body: ${(error as Error).message}`);
  }
  const fields: FormFields = new Map();
  for (const [name, value] of data) {
    if (fields.has(name)) continue;
    fields.set(name, typeof value === 'string' ? value : await value.text());
  }
  return fields;
}
