/**
 * Configuration from the environment, parsed and checked once at start-up.
 * A bad value stops start-up with a message naming the variable.
 */
import { z } from 'zod';
import { PorterError } from '../errors/porter-error.js';

const positiveInt = z.coerce.number().int().positive();
const optionalSecret = z
  .string()
  .optional()
  .transform((value) => (value === '' ? undefined : value));

/** `host:port,host:port,…`, unset or empty: undefined. */
const hostPortList = z
  .string()
  .optional()
  .transform((text, context) => {
    if (text === undefined || text === '') return undefined;
    const nodes = parseHostPorts(text);
    if (!nodes) {
      context.addIssue({ code: 'custom', message: 'host:port pairs separated by commas' });
      return z.NEVER;
    }
    return nodes;
  });

/**
 * PORTER_TRUST_PROXY: `false` or unset (no proxy is believed), `true` (every hop is), a number of
 * hops, or a comma-separated list of addresses, CIDRs and proxy-addr's names (`loopback`, …).
 */
const trustProxy = z
  .string()
  .optional()
  .transform((text, context): boolean | number | string => {
    const value = (text ?? '').trim();
    if (value === '' || value === 'false') return false;
    if (value === 'true') return true;
    if (/^\d{1,2}$/.test(value)) return Number(value);
    const parts = value.split(',').map((part) => part.trim());
    const named = new Set(['loopback', 'linklocal', 'uniquelocal']);
    if (parts.every((part) => named.has(part) || /^[0-9A-Fa-f:.]+(\/\d{1,3})?$/.test(part))) {
      return parts.join(',');
    }
    context.addIssue({
      code: 'custom',
      message: 'false, true, a number of hops, or addresses/CIDRs separated by commas',
    });
    return z.NEVER;
  });

/** What OTEL_TRACES_EXPORTER may name. */
export type TraceExporterName = 'otlp' | 'console' | 'none';
const TRACE_EXPORTERS: ReadonlySet<string> = new Set<TraceExporterName>([
  'otlp',
  'console',
  'none',
]);

/** An http:// or https:// URL (`collector:4318` would parse as a URL of scheme `collector:`). */
const httpUrl = z
  .string()
  .url()
  .refine((text) => /^https?:\/\//i.test(text), 'an http:// or https:// URL');

const otlpProtocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'http/protobuf or http/json (porter sends OTLP over HTTP, not grpc)',
});

/** Every variable porter reads, with its default. docs/configuration.md mirrors this (a test checks). */
export const envSchema = z.object({
  /** Redis holding queues, staged records and results. */
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Seed nodes of a Redis Cluster (`host:port,host:port,…`); set, porter talks to the Cluster. */
  REDIS_CLUSTER_NODES: hostPortList,
  /** Sentinels of a Redis Sentinel set (`host:port,…`); set, porter asks them for the master. */
  REDIS_SENTINELS: hostPortList,
  /** The master's name the Sentinels watch (their `sentinel monitor <name> …`). */
  REDIS_SENTINEL_NAME: z.string().min(1).optional(),
  /** ACL user and password of the Redis data nodes (every mode); the URL's own win for REDIS_URL. */
  REDIS_USERNAME: optionalSecret,
  REDIS_PASSWORD: optionalSecret,
  /** ACL user and password of the Sentinels themselves, when they ask for one. */
  REDIS_SENTINEL_USERNAME: optionalSecret,
  REDIS_SENTINEL_PASSWORD: optionalSecret,
  /** TLS to Redis (every mode; `rediss://` in REDIS_URL says the same). */
  REDIS_TLS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * Start on a Redis whose maxmemory-policy evicts keys (allkeys-*, volatile-*): a full Redis then
   * drops imports, jobs and results. Refused at start-up unless `true`.
   */
  PORTER_ALLOW_EVICTION: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * Prefix of every Redis key porter writes (queues included). porter adds its own hash tags
   * (one slot per queue and per import); a prefix that is a hash tag, `{porter}`, puts every key
   * in one slot.
   */
  PORTER_PREFIX: z
    .string()
    .regex(
      /^(\{[A-Za-z0-9:_-]+\}|[A-Za-z0-9:_-])[A-Za-z0-9:_-]*$/,
      'letters, digits, ":", "_" and "-" only, after an optional leading hash tag such as {porter}',
    )
    .default('porter'),
  /**
   * JSON file of named targets (name → url, auth, limits); every process reads the same one.
   * The ADMIN_* variables make the target `default` unless the file names one.
   */
  PORTER_TARGETS_FILE: z.string().min(1).optional(),
  /** JSON file of named sources: directories (LDAP, Active Directory) porter reads rows from. */
  PORTER_SOURCES_FILE: z.string().min(1).optional(),
  /**
   * The target `default`'s admin server. Unset with no targets file: the sandbox on
   * 127.0.0.1:8080; unset beside a targets file that names no `default`: there is none.
   */
  ADMIN_BASE_URL: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string().url().optional(),
  ),
  ADMIN_API_KEY: optionalSecret,
  ADMIN_USER: optionalSecret,
  ADMIN_PASSWORD: optionalSecret,
  /** How ADMIN_USER/ADMIN_PASSWORD travel: HTTP Basic or user/pass parameters. */
  ADMIN_AUTH_MODE: z.enum(['basic', 'params']).default('basic'),
  ADMIN_TIMEOUT_MS: positiveInt.default(60_000),
  /** Extra headers sent with every admin request, as a JSON object of strings. */
  ADMIN_EXTRA_HEADERS: z
    .string()
    .optional()
    .transform((text, context) => {
      if (text === undefined || text === '') return {};
      try {
        return z.record(z.string(), z.string()).parse(JSON.parse(text));
      } catch {
        context.addIssue({
          code: 'custom',
          message: 'a JSON object of header names to string values',
        });
        return z.NEVER;
      }
    }),
  ADMIN_CONNECT_TIMEOUT_MS: positiveInt.default(5_000),
  /** Bearer token required by the producer API. */
  PORTER_API_TOKEN: optionalSecret,
  PORTER_MAX_UPLOAD_BYTES: positiveInt.default(200 * 1024 * 1024),
  /** A mapping file replacing the default SCIM User → DAM user mapping (docs/scim.md). */
  PORTER_SCIM_MAPPING_FILE: z.string().min(1).optional(),
  /** SCIM deletes and deactivations applied per target and hour; more are held (docs/scim.md). */
  PORTER_SCIM_MAX_DELETES_PER_HOUR: z.coerce.number().int().min(0).default(25),
  /** How long a SCIM user create waits for others to share its call, in ms (docs/scim.md). */
  PORTER_SCIM_WINDOW_MS: z.coerce.number().int().min(0).max(1_000).default(20),
  /** The most SCIM user creates in one call of the admin interface. */
  PORTER_SCIM_MAX_BATCH: positiveInt.max(1_000).default(100),
  /** Largest record of an upload (CSV row, JSON element, NDJSON line); a larger one fails alone. */
  PORTER_MAX_RECORD_BYTES: positiveInt.default(1024 * 1024),
  /** Days results, reports and import state stay in Redis. */
  PORTER_RESULT_TTL_DAYS: z.coerce.number().positive().default(7),
  /** Attempts per batch on transient failures (first try included). */
  PORTER_MAX_ATTEMPTS: positiveInt.default(5),
  /** Delay before the first retry; doubled each time, with jitter. */
  PORTER_RETRY_BASE_MS: positiveInt.default(500),
  PORTER_RETRY_MAX_MS: positiveInt.default(30_000),
  /** Directory exports are written under; HTTP requests name subdirectories of it only. */
  PORTER_EXPORT_DIR: z.string().min(1).default('exports'),
  /**
   * How long a worker's hold on a batch lasts without renewal. A live worker renews it every
   * half period; a killed one stops, and another worker takes the batch over once it lapses
   * (found by a check every half period: within 9 s of the last renewal by default).
   */
  PORTER_LOCK_DURATION_MS: positiveInt.default(6_000),
  /** How long SIGTERM/SIGINT waits for the batches in hand before the worker gives them up. */
  PORTER_SHUTDOWN_TIMEOUT_MS: positiveInt.default(30_000),
  /** Cap on requests per second to the admin server across all workers; 0 = none. */
  PORTER_MAX_RPS: z.coerce.number().int().min(0).default(0),
  /** Share of failed calls (0..1) over the window that pauses an import. */
  PORTER_BREAKER_THRESHOLD: z.coerce.number().min(0).max(1).default(0.5),
  /** Calls in the window before the share counts. */
  PORTER_BREAKER_MIN_CALLS: positiveInt.default(10),
  PORTER_BREAKER_WINDOW_MS: positiveInt.default(30_000),
  /** Wait before a paused import probes the server with one batch. */
  PORTER_BREAKER_COOLDOWN_MS: positiveInt.default(15_000),
  /** Batches one worker process runs at once (`porter worker --concurrency` overrides it). */
  PORTER_WORKER_CONCURRENCY: positiveInt.default(4),
  /** How imports look records up when they do not say: a bulk snapshot, one read each, or auto. */
  PORTER_LOOKUP: z.enum(['auto', 'snapshot', 'each']).default('auto'),
  /** Port of a worker's /metrics, /healthz and /readyz (`porter worker --metrics-port`); unset = none. */
  PORTER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** Address a worker's metrics port listens on. */
  PORTER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Whether the API's /metrics needs the API token (`token`) or not (`none`). */
  PORTER_METRICS_AUTH: z.enum(['token', 'none']).default('token'),
  /** Time /readyz gives Redis and the admin server to answer. */
  PORTER_READY_TIMEOUT_MS: positiveInt.default(2_000),
  /** The queue dashboard (/queues) shows jobs without the buttons that change them. */
  PORTER_QUEUES_READ_ONLY: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
  /** Days audit events are kept (the audit stream is trimmed by age as events are added). */
  PORTER_AUDIT_RETENTION_DAYS: z.coerce.number().positive().default(365),
  /** A file every audit event is also appended to, as one JSON line (for a log shipper). */
  PORTER_AUDIT_FILE: z.string().min(1).optional(),
  /** Failed sign-ins and bad tokens one address may make in a minute before it is refused. */
  PORTER_AUTH_FAILURES_PER_MINUTE: positiveInt.default(10),
  /** How long a console or queue dashboard session lasts. */
  PORTER_SESSION_HOURS: z.coerce.number().positive().default(12),
  /** OpenID Connect issuer of the console's sign-in; unset, the console takes tokens only. */
  PORTER_OIDC_ISSUER: z.string().url().optional(),
  PORTER_OIDC_CLIENT_ID: z.string().min(1).optional(),
  PORTER_OIDC_CLIENT_SECRET: optionalSecret,
  /** The callback URL registered with the provider: `<porter's public URL>/v1/session/callback`. */
  PORTER_OIDC_REDIRECT_URL: z.string().url().optional(),
  PORTER_OIDC_SCOPES: z.string().min(1).default('openid profile email'),
  /** The ID token claim holding the user's groups or roles. */
  PORTER_OIDC_ROLE_CLAIM: z.string().min(1).default('groups'),
  /** Claim values to roles: `porter-admins=admin,dam-ops=operator`; the highest one matching wins. */
  PORTER_OIDC_ROLE_MAP: z.string().optional(),
  /** The claim naming the user in the audit trail. */
  PORTER_OIDC_NAME_CLAIM: z.string().min(1).default('email'),
  /** Allow an issuer over plain http (tests, a provider on localhost). */
  PORTER_OIDC_ALLOW_HTTP: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** How often a console session's role is checked again with the provider, in minutes. */
  PORTER_OIDC_RECHECK_MINUTES: z.coerce.number().min(0).max(60).default(5),
  /** The name the CLI acts under (`cli:<name>`); default the shell user. */
  PORTER_CLI_USER: z.string().min(1).optional(),
  /** An API token the CLI acts as where four eyes or target limits apply (`--token` wins). */
  PORTER_TOKEN: optionalSecret,
  /**
   * Which proxies in front of the API are believed about the client (X-Forwarded-For) and the
   * scheme (X-Forwarded-Proto): `false` (none), `true` (any), a hop count, or addresses/CIDRs.
   */
  PORTER_TRUST_PROXY: trustProxy,
  /**
   * JSON file of notification channels (name → webhook, chat or email; the events and targets
   * each is told of); read at start-up by every process. Unset: no notifications.
   */
  PORTER_NOTIFY_FILE: z.string().min(1).optional(),
  /** porter's public URL (the console's links in notifications point under it). */
  PORTER_PUBLIC_URL: httpUrl.optional(),
  /** Hosts notifications may go to (`hooks.slack.com,*.example.com`); unset: any host. */
  PORTER_NOTIFY_ALLOWED_HOSTS: z
    .string()
    .optional()
    .transform((text, context) => {
      if (text === undefined || text.trim() === '') return undefined;
      const hosts = text.split(',').map((host) => host.trim().toLowerCase());
      if (!hosts.every((host) => /^(\*\.)?[a-z0-9.-]+$|^\[?[0-9a-f:.]+\]?$/.test(host))) {
        context.addIssue({
          code: 'custom',
          message: 'host names or *.domain, separated by commas',
        });
        return z.NEVER;
      }
      return hosts;
    }),
  /** A receiver (webhook, chat, mail server) that has not answered within this is cut off. */
  PORTER_NOTIFY_TIMEOUT_MS: positiveInt.default(10_000),
  /** Delay before a failed delivery's first retry; doubled each time up to the largest. */
  PORTER_NOTIFY_RETRY_BASE_MS: positiveInt.default(30_000),
  PORTER_NOTIFY_RETRY_MAX_MS: positiveInt.default(3_600_000),
  /** How long a failed delivery is retried before it is given up. */
  PORTER_NOTIFY_RETRY_HOURS: z.coerce.number().positive().default(24),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `true` turns tracing off whatever else is set (the OpenTelemetry switch). */
  OTEL_SDK_DISABLED: z
    .preprocess(
      (value) => (typeof value === 'string' ? value.toLowerCase() : value),
      z.enum(['true', 'false']).default('false'),
    )
    .transform((value) => value === 'true'),
  /**
   * Where spans go: `otlp`, `console` (JSON lines on stderr), both (`otlp,console`) or `none`.
   * Unset: `otlp` when an OTLP endpoint is set, else no tracing (src/observability).
   */
  OTEL_TRACES_EXPORTER: z
    .string()
    .optional()
    .transform((text, context) => {
      if (text === undefined || text === '') return undefined;
      const names = text.split(',').map((name) => name.trim().toLowerCase());
      if (!names.every((name) => TRACE_EXPORTERS.has(name))) {
        context.addIssue({ code: 'custom', message: 'otlp, console or none, separated by commas' });
        return z.NEVER;
      }
      return names as TraceExporterName[];
    }),
  /** OTLP/HTTP collector base URL; spans go to `<url>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  /** The full URL spans are posted to; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  /** The body of OTLP/HTTP requests: protobuf or JSON (grpc is not sent). */
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default('http/protobuf'),
  /** The same for spans alone; wins over OTEL_EXPORTER_OTLP_PROTOCOL. */
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  /** `service.name` of the spans; unset, `porter` (or OTEL_RESOURCE_ATTRIBUTES' own). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** Milliseconds between two sends of the spans ended meanwhile. */
  OTEL_BSP_SCHEDULE_DELAY: positiveInt.default(5_000),
});

export type Env = z.infer<typeof envSchema>;

/** `host:port,host:port` as a list, or undefined when any part is not one. */
function parseHostPorts(text: string): { host: string; port: number }[] | undefined {
  const nodes: { host: string; port: number }[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*(\[[^\]]+\]|[^\s:]+):(\d{1,5})\s*$/.exec(part);
    if (!match) return undefined;
    const port = Number(match[2]);
    if (port < 1 || port > 65_535) return undefined;
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes.length > 0 ? nodes : undefined;
}

/** The one Redis setting that combines several variables, checked once. */
function checkRedisSettings(env: Env): { field: string; message: string } | undefined {
  if (env.REDIS_CLUSTER_NODES && env.REDIS_SENTINELS) {
    return {
      field: 'REDIS_SENTINELS',
      message: 'set either REDIS_CLUSTER_NODES or REDIS_SENTINELS, not both',
    };
  }
  if (env.REDIS_SENTINELS && !env.REDIS_SENTINEL_NAME) {
    return {
      field: 'REDIS_SENTINEL_NAME',
      message: 'the name of the master the Sentinels watch is needed with REDIS_SENTINELS',
    };
  }
  return undefined;
}

/** Parses the environment; throws PORTER_CONFIG_INVALID naming the first bad variable. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = source[key];
    input[key] = value === '' && key !== 'ADMIN_PASSWORD' ? undefined : value;
  }
  const parsed = envSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    throw new PorterError(
      'PORTER_CONFIG_INVALID',
      `${name}: ${issue?.message ?? 'invalid value'}`,
      {
        details: { field: name },
      },
    );
  }
  const combined = checkRedisSettings(parsed.data);
  if (combined) {
    throw new PorterError('PORTER_CONFIG_INVALID', `${combined.field}: ${combined.message}`, {
      details: { field: combined.field },
    });
  }
  return parsed.data;
}
