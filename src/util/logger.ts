/** One root logger; child loggers carry ids. Secrets are redacted wherever they appear. */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'password',
  '*.password',
  'pass',
  '*.pass',
  'apiKey',
  '*.apiKey',
  'apikey',
  '*.apikey',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.apikey',
  'ADMIN_PASSWORD',
  'ADMIN_API_KEY',
  'PORTER_API_TOKEN',
  '*.ADMIN_PASSWORD',
  '*.ADMIN_API_KEY',
  '*.PORTER_API_TOKEN',
  'PORTER_OIDC_CLIENT_SECRET',
  '*.PORTER_OIDC_CLIENT_SECRET',
  'PORTER_TOKEN',
  '*.PORTER_TOKEN',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino(
    {
      name: options.name ?? 'porter',
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

/** A logger that writes nothing, for library use and tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
