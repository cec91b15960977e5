/**
 * /console: the operator's web console, plain files served as they are from src/console/ (no
 * build step). The files need no token; every call they make to /v1 does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PorterError } from '../../errors/porter-error.js';
import { PROJECT_ROOT } from '../../util/project-root.js';

/** Where the console's files are: in the sources, whether porter runs from them or its bundle. */
export const CONSOLE_DIR = join(PROJECT_ROOT, 'src', 'console');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Nothing is loaded from elsewhere, nothing runs inline, the console is never framed. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

interface ConsoleFile {
  body: Buffer;
  contentType: string;
}

/** The console's files by name, read once: only these names are ever served. */
function loadFiles(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType === undefined || !/^[a-z0-9-]+\.[a-z]+$/.test(name)) continue;
    files.set(name, { body: readFileSync(join(dir, name)), contentType });
  }
  return files;
}

function send(reply: FastifyReply, file: ConsoleFile): FastifyReply {
  return reply
    .header('content-type', file.contentType)
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-cache')
    .send(file.body);
}

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const files = loadFiles(CONSOLE_DIR);
  const index = files.get('index.html');
  if (index === undefined) throw new Error(`no index.html in ${CONSOLE_DIR}`);
  const hidden = { hide: true } as const;

  app.get('/console', { config: { access: 'public' }, schema: hidden }, async (_request, reply) =>
    reply.redirect('/console/'),
  );
  app.get('/console/', { config: { access: 'public' }, schema: hidden }, async (_request, reply) =>
    send(reply, index),
  );
  app.get<{ Params: { name: string } }>(
    '/console/:name',
    { config: { access: 'public' }, schema: hidden },
    async (request, reply) => {
      const file = files.get(request.params.name);
      if (file === undefined) {
        throw new PorterError('PORTER_NOT_FOUND', `no console file ${request.params.name}`);
      }
      return send(reply, file);
    },
  );
}
