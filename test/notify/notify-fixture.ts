/**
 * Receivers for notification tests: a real HTTP server that answers as told (ok, fail, hang,
 * redirect) and keeps every request, a real SMTP server (smtp-server) that keeps every mail,
 * and a channels file written to a temporary directory.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
}

/** What the receiver does with its n-th request (0-based). */
export type Answer = 'ok' | 'fail' | 'hang' | { redirect: string };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startReceiver(
  answer: (index: number) => Answer = () => 'ok',
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = requests.length;
      requests.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        url: request.url ?? '/',
      });
      const what = answer(index);
      if (what === 'hang') {
        hanging.push(response);
        return;
      }
      if (typeof what === 'object') {
        response.writeHead(307, { location: what.redirect }).end();
        return;
      }
      response.writeHead(what === 'ok' ? 200 : 503).end(what);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface MailServer {
  url: string;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/** A real SMTP server on a free port (or `port`), without TLS (smtp://), keeping every mail. */
export async function startMailServer(port = 0): Promise<MailServer> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((to) => to.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const listening = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${listening}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The decoded text body of a mail (quoted-printable undone, soft line breaks joined). */
export function mailText(raw: string): string {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (!/quoted-printable/i.test(head ?? '')) return body;
  return Buffer.from(
    body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
}

/** A mail's header, unfolded. */
export function mailHeader(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const line = head
    .split(/\r?\n/)
    .find((text) => text.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

export interface ChannelsDir {
  dir: string;
  /** A new Standard Webhooks secret in a file; returns the secret and its file. */
  secret(name: string): Promise<{ secret: string; file: string }>;
  /** Writes a channels file (`channels.json` unless named); returns its path. */
  write(channels: Record<string, unknown>, name?: string): Promise<string>;
  close(): Promise<void>;
}

export async function channelsDir(): Promise<ChannelsDir> {
  const dir = await mkdtemp(join(tmpdir(), 'porter-notify-'));
  return {
    dir,
    async secret(name) {
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const file = join(dir, `${name}.secret`);
      await writeFile(file, `${secret}\n`, { mode: 0o600 });
      return { secret, file };
    },
    async write(channels, name = 'channels.json') {
      const path = join(dir, name);
      await writeFile(path, JSON.stringify(channels, null, 2));
      return path;
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Environment of a pipeline that notifies quickly: short retries and timeout. */
export function notifyEnv(
  file: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PORTER_NOTIFY_FILE: file,
    PORTER_PUBLIC_URL: 'https://porter.example.com',
    PORTER_NOTIFY_RETRY_BASE_MS: '50',
    PORTER_NOTIFY_RETRY_MAX_MS: '200',
    PORTER_NOTIFY_RETRY_HOURS: '0.01',
    PORTER_NOTIFY_TIMEOUT_MS: '2000',
    ...extra,
  };
}

export interface SignedHook {
  receiver: Receiver;
  dir: ChannelsDir;
  /** The channel's Standard Webhooks secret, for the receiver's check. */
  secret: string;
  /** The channels file: one webhook channel `ops` taking `events`. */
  path: string;
}

/** A receiver and a channels file naming it as the signed webhook channel `ops`. */
export async function signedWebhook(events: string[]): Promise<SignedHook> {
  const receiver = await startReceiver();
  const dir = await channelsDir();
  const signing = await dir.secret('ops');
  const path = await dir.write({
    ops: { kind: 'webhook', url: receiver.url, secret: { file: signing.file }, events },
  });
  return { receiver, dir, secret: signing.secret, path };
}
