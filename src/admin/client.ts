/**
 * Typed client of the admin interface: the only code that talks to an admin server.
 * One method per endpoint over an undici keep-alive pool.
 */
import type { Dispatcher, Pool } from 'undici';
import { loadUndici, undiciErrorsIfLoaded } from './undici.js';
import { multipartBody } from './multipart.js';
import { PorterError } from '../errors/porter-error.js';
import { Slots } from '../util/slots.js';
import {
  AdminBadResponseError,
  AdminConnectionError,
  AdminError,
  AdminHttpError,
  AdminNoAnswerError,
  parseRetryAfter,
  type AdminErrorInfo,
} from './errors.js';
import { describe, isUndiciSocketError, parseErrorBody, parseRecords } from './answers.js';
import { recordDecoder, type AnswerDecoder } from './answer-decoder.js';
import {
  ADMIN_PATH_PREFIX,
  RESOURCES,
  type ResourceName,
  type ResourceRecordMap,
} from './resources.js';
import type { AclRecord, GroupRecord, UserRecord } from './schemas.js';
import { callSpanAttributes, CALL_SPAN } from './call-span.js';
import { startSpan, withSpan, type SpanOptions } from '../observability/tracing.js';

export type WriteMethod = 'PUT' | 'POST' | 'DELETE';

/**
 * How a request to the admin server ended: `ok` (a 2xx answer of the documented shape),
 * `refused` (a 4xx other than 429, or an error body under 2xx), `rate_limited` (429),
 * `server_error` (5xx), `no_answer` (sent, no answer: reset, timeout, broken off),
 * `unreachable` (no connection), `bad_answer` (2xx of another shape), `aborted` (stopped by us).
 */
export type AdminCallOutcome =
  | 'ok'
  | 'refused'
  | 'rate_limited'
  | 'server_error'
  | 'no_answer'
  | 'unreachable'
  | 'bad_answer'
  | 'aborted';

/** One request to the admin server, told to `onCall` once it ended. */
export interface AdminCallEvent {
  method: string;
  resource: ResourceName;
  outcome: AdminCallOutcome;
  /** From sending (after any wait of `beforeRequest`) to the answer read whole. */
  durationMs: number;
}

/** The outcome of a request that ended with this error (undefined: it succeeded). */
export function adminCallOutcome(error: unknown): AdminCallOutcome {
  if (error === undefined) return 'ok';
  if (error instanceof AdminHttpError) {
    const status = error.status ?? 0;
    if (status === 429) return 'rate_limited';
    return status >= 500 ? 'server_error' : 'refused';
  }
  if (error instanceof AdminConnectionError) return 'unreachable';
  if (error instanceof AdminNoAnswerError) return 'no_answer';
  if (error instanceof AdminBadResponseError) return 'bad_answer';
  return 'aborted';
}

export interface AdminAuthOptions {
  /** Sent as the `apikey` request header. */
  apiKey?: string;
  user?: string;
  password?: string;
  /** How user and password travel: HTTP Basic header (default) or `user`/`pass` parameters. */
  userPasswordMode?: 'basic' | 'params';
}

export interface AdminClientOptions {
  /** Origin of the admin server, e.g. http://127.0.0.1:8080 (a path prefix before /wf is kept). */
  baseUrl: string;
  auth?: AdminAuthOptions;
  /** Time to connect. @defaultValue 5000 */
  connectTimeoutMs?: number;
  /** Time from sending a request to its answer's headers, and between body chunks. @defaultValue 60000 */
  requestTimeoutMs?: number;
  /** Keep-alive connections in the pool, and so requests in flight. @defaultValue 16 */
  connections?: number;
  /** Form encoding of PUT/POST/DELETE bodies. @defaultValue 'multipart' */
  bodyEncoding?: 'multipart' | 'urlencoded';
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Awaited before every request: a shared rate cap or back-off across workers. */
  beforeRequest?: (signal?: AbortSignal) => Promise<void>;
  /** Told of every request once it ended (metrics); must not throw. */
  onCall?: (event: AdminCallEvent) => void;
  /**
   * The name of a read-only target: every PUT, POST and DELETE is refused with
   * PORTER_TARGET_READ_ONLY before anything is sent.
   */
  readOnly?: string;
  /** The name of the target this client reaches, on the spans of its calls. */
  target?: string;
}

export interface UserQuery {
  userId?: number;
  username?: string;
}
export interface GroupQuery {
  id?: number;
  name?: string;
}
export interface AclQuery {
  id?: string;
  userId?: number;
  groupId?: number;
}
export interface ResourceQueryMap {
  users: UserQuery;
  groups: GroupQuery;
  acls: AclQuery;
}

/** What a request tells its span and metrics: when it left, and the status of its answer. */
interface CallHooks {
  onSend: (at: number) => void;
  onAnswer: (status: number) => void;
}

/** Bytes of a non-array GET answer kept to read an error body from. */
const NOT_ARRAY_BODY_LIMIT = 64 * 1024;

const CONNECT_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export class AdminClient {
  readonly baseUrl: string;
  /** Scheme, host and port of the server, never its credentials. */
  private readonly origin: string;
  /** Opened on the first request (undici is loaded then). */
  private pool: Promise<Pool> | undefined;
  private readonly poolOptions: Pool.Options;
  /** One per connection: a request takes one before its checks, and keeps it to its answer's end. */
  private readonly slots: Slots;
  private readonly pathPrefix: string;
  private readonly options: AdminClientOptions;
  private readonly authHeaders: Record<string, string>;
  private closed = false;

  constructor(options: AdminClientOptions) {
    this.options = options;
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
    this.pathPrefix = url.pathname.replace(/\/+$/, '') + ADMIN_PATH_PREFIX;
    const timeout = options.requestTimeoutMs ?? 60_000;
    const connections = options.connections ?? 16;
    this.slots = new Slots(connections);
    this.poolOptions = {
      connections,
      connect: { timeout: options.connectTimeoutMs ?? 5_000 },
      headersTimeout: timeout,
      bodyTimeout: timeout,
      keepAliveTimeout: 10_000,
    };
    this.authHeaders = {};
    const auth = options.auth ?? {};
    if (auth.apiKey) this.authHeaders.apikey = auth.apiKey;
    if (auth.user !== undefined && (auth.userPasswordMode ?? 'basic') === 'basic') {
      const token = Buffer.from(`${auth.user}:${auth.password ?? ''}`).toString('base64');
      this.authHeaders.authorization = `Basic ${token}`;
    }
  }

  // ---- users ----
  listUsers(query: UserQuery = {}, signal?: AbortSignal): Promise<UserRecord[]> {
    return this.get('users', query, signal);
  }
  putUsers(records: UserRecord[], signal?: AbortSignal): Promise<UserRecord[]> {
    return this.write('users', 'PUT', records, signal);
  }
  postUsers(records: UserRecord[], signal?: AbortSignal): Promise<UserRecord[]> {
    return this.write('users', 'POST', records, signal);
  }
  deleteUsers(records: UserRecord[], signal?: AbortSignal): Promise<UserRecord[]> {
    return this.write('users', 'DELETE', records, signal);
  }

  // ---- groups ----
  listGroups(query: GroupQuery = {}, signal?: AbortSignal): Promise<GroupRecord[]> {
    return this.get('groups', query, signal);
  }
  putGroups(records: GroupRecord[], signal?: AbortSignal): Promise<GroupRecord[]> {
    return this.write('groups', 'PUT', records, signal);
  }
  postGroups(records: GroupRecord[], signal?: AbortSignal): Promise<GroupRecord[]> {
    return this.write('groups', 'POST', records, signal);
  }
  deleteGroups(records: GroupRecord[], signal?: AbortSignal): Promise<GroupRecord[]> {
    return this.write('groups', 'DELETE', records, signal);
  }

  // ---- ACLs ----
  listAcls(query: AclQuery = {}, signal?: AbortSignal): Promise<AclRecord[]> {
    return this.get('acls', query, signal);
  }
  putAcls(records: AclRecord[], signal?: AbortSignal): Promise<AclRecord[]> {
    return this.write('acls', 'PUT', records, signal);
  }

  /** GET on a resource; no filter returns all records. */
  async get<R extends ResourceName>(
    resource: R,
    query: ResourceQueryMap[R] = {},
    signal?: AbortSignal,
  ): Promise<ResourceRecordMap[R][]> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) params.set(name, String(value));
    }
    this.addParamAuth(params);
    const path = this.pathPrefix + RESOURCES[resource].path;
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return this.observed(resource, 'GET', path, undefined, async (hooks) => {
      const request = { method: 'GET', path: path + search, logPath: path, ...hooks };
      const body = await this.send(request, signal);
      return parseRecords(resource, body, { method: 'GET', path });
    });
  }

  /**
   * GET on a resource with its answer streamed: records are yielded as the JSON array
   * arrives, so a large answer never sits whole in memory.
   */
  async *stream<R extends ResourceName>(
    resource: R,
    query: ResourceQueryMap[R] = {},
    signal?: AbortSignal,
  ): AsyncGenerator<ResourceRecordMap[R]> {
    for await (const records of this.streamBatches(resource, query, signal)) yield* records;
  }

  /**
   * GET on a resource with its answer streamed in batches: the records each part of the JSON
   * array completes, as it arrives. The same answer as stream(), for readers of millions of
   * records that pay per part rather than per record.
   */
  streamBatches<R extends ResourceName>(
    resource: R,
    query: ResourceQueryMap[R] = {},
    signal?: AbortSignal,
  ): AsyncGenerator<ResourceRecordMap[R][]> {
    return this.streamDecoded(resource, query, signal, (info) => recordDecoder(resource, info));
  }

  /**
   * GET on a resource with its answer's bytes read by `decoder` as they arrive: what each
   * chunk completes is yielded, a fault the decoder reports is thrown after it. The same call,
   * span, errors and retries' grounds as streamBatches, for a reader that needs no record objects
   * (the CSV export writes its lines straight from the bytes).
   */
  async *streamDecoded<R extends ResourceName, T>(
    resource: R,
    query: ResourceQueryMap[R],
    signal: AbortSignal | undefined,
    makeDecoder: (info: { method: string; path: string }) => AnswerDecoder<T>,
  ): AsyncGenerator<T> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) params.set(name, String(value));
    }
    this.addParamAuth(params);
    const path = this.pathPrefix + RESOURCES[resource].path;
    const info = { method: 'GET', path };
    const search = params.size > 0 ? `?${params.toString()}` : '';
    let startedAt = 0;
    let failure: unknown;
    // the span of a streamed read lasts until its last record is read (or it is dropped)
    const span = startSpan(
      `GET ${resource}`,
      this.spanAttributes(resource, 'GET', path, undefined),
    );
    let read = 0;
    const ended = (error: unknown): void => {
      span.setAttribute(CALL_SPAN.outcome, adminCallOutcome(error));
      span.setAttribute(CALL_SPAN.records, read);
      span.end(error);
      this.tell(resource, 'GET', startedAt, error);
    };
    const response = await this.dispatch('GET', path + search, info, undefined, signal, (at) => {
      startedAt = at;
    }).catch((error: unknown) => {
      ended(error);
      throw error;
    });
    span.setAttribute(CALL_SPAN.status, response.statusCode);
    if (response.statusCode >= 300) {
      const text = await response.body.text().catch(() => '');
      const error = this.httpError(response, text, info);
      ended(error);
      throw error;
    }
    const decoder = makeDecoder(info);
    // An answer that is not an array (an error body under 200, a stray value) is kept, up to a
    // bound, so it is judged exactly as get() judges it.
    const head: Buffer[] = [];
    let headBytes = 0;
    try {
      for await (const chunk of response.body) {
        const bytes = chunk as Buffer;
        if (decoder.kind !== 'array' && headBytes < NOT_ARRAY_BODY_LIMIT) {
          head.push(bytes);
          headBytes += bytes.length;
        }
        if (decoder.kind === 'other') continue;
        const decoded = decoder.write(bytes);
        read += decoded.records;
        // what came before a wrong record still goes out, as one by one it would have
        if (decoded.value !== undefined) yield decoded.value;
        if (decoded.fault !== undefined) throw decoded.fault;
      }
      decoder.end();
      if (decoder.kind !== 'array') {
        // empty, a lone value or an object: not records; parseRecords says which error it is
        parseRecords(resource, Buffer.concat(head).toString('utf8'), info);
        throw new AdminBadResponseError(`${resource} GET did not answer with a JSON array`, info);
      }
    } catch (error) {
      failure = error;
      if (signal?.aborted) throw signal.reason ?? error;
      if (error instanceof AdminError) throw error;
      if (isUndiciSocketError(error)) {
        failure = new AdminNoAnswerError(
          `${resource} GET broke off: ${describe(error)}`,
          info,
          error,
        );
        throw failure;
      }
      failure = new AdminBadResponseError(
        `${resource} GET answered invalid JSON: ${describe(error)}`,
        info,
        error,
      );
      throw failure;
    } finally {
      if (!response.body.destroyed) response.body.destroy();
      ended(failure);
    }
  }

  /** PUT, POST or DELETE of a multi-record form on a resource. */
  async write<R extends ResourceName>(
    resource: R,
    method: WriteMethod,
    records: ResourceRecordMap[R][],
    signal?: AbortSignal,
    options: {
      /**
       * The caller's last word before the request leaves, once it has a connection and the
       * shared gate let it through: a check that may still stop it by throwing (a cancel), and
       * the send journal's mark.
       */
      beforeSend?: () => Promise<void>;
    } = {},
  ): Promise<ResourceRecordMap[R][]> {
    if (this.options.readOnly !== undefined) {
      throw new PorterError(
        'PORTER_TARGET_READ_ONLY',
        `target "${this.options.readOnly}" is read-only: ${method} of ${resource} refused, nothing sent`,
      );
    }
    const descriptor = RESOURCES[resource];
    const path = this.pathPrefix + descriptor.path;
    const fields: [string, string][] = [[descriptor.formField, JSON.stringify(records)]];
    const auth = this.options.auth;
    if (auth?.user !== undefined && auth.userPasswordMode === 'params') {
      fields.push(['user', auth.user], ['pass', auth.password ?? '']);
    }
    return this.observed(resource, method, path, records.length, async (hooks) => {
      const body = await this.send(
        { method, path, logPath: path, form: fields, ...hooks, beforeSend: options.beforeSend },
        signal,
      );
      return parseRecords(resource, body, { method, path });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await (await this.pool)?.close();
  }

  private openPool(): Promise<Pool> {
    this.pool ??= loadUndici().then(({ Pool }) => {
      const pool = new Pool(this.origin, this.poolOptions);
      // a request after close fails as it would on the pool closed
      if (this.closed) void pool.close();
      return pool;
    });
    return this.pool;
  }

  /**
   * Runs one request in its span (`sent`: the records a write sends) and tells `onCall` how it
   * ended and how long it took.
   */
  private observed<T extends unknown[]>(
    resource: ResourceName,
    method: string,
    path: string,
    sent: number | undefined,
    run: (hooks: CallHooks) => Promise<T>,
  ): Promise<T> {
    const attributes = this.spanAttributes(resource, method, path, sent);
    return withSpan(`${method} ${resource}`, attributes, async (span) => {
      let startedAt = 0;
      const hooks: CallHooks = {
        onSend: (at) => {
          startedAt = at;
          span.addEvent('sent');
        },
        onAnswer: (status) => span.setAttribute(CALL_SPAN.status, status),
      };
      try {
        const records = await run(hooks);
        if (sent === undefined) span.setAttribute(CALL_SPAN.records, records.length);
        span.setAttribute(CALL_SPAN.outcome, 'ok');
        this.tell(resource, method, startedAt, undefined);
        return records;
      } catch (error) {
        span.setAttribute(CALL_SPAN.outcome, adminCallOutcome(error));
        this.tell(resource, method, startedAt, error);
        throw error;
      }
    });
  }

  private spanAttributes(
    resource: ResourceName,
    method: string,
    path: string,
    records: number | undefined,
  ): SpanOptions {
    return callSpanAttributes({
      method,
      resource,
      url: this.origin + path,
      target: this.options.target,
      records,
    });
  }

  private tell(resource: ResourceName, method: string, startedAt: number, error: unknown): void {
    const onCall = this.options.onCall;
    if (!onCall) return;
    const durationMs = startedAt > 0 ? Math.max(0, performance.now() - startedAt) : 0;
    try {
      onCall({ method, resource, outcome: adminCallOutcome(error), durationMs });
    } catch {
      // metrics never break a request
    }
  }

  private addParamAuth(params: URLSearchParams): void {
    const auth = this.options.auth;
    if (auth?.user !== undefined && auth.userPasswordMode === 'params') {
      params.set('user', auth.user);
      params.set('pass', auth.password ?? '');
    }
  }

  private async send(
    request: {
      method: string;
      path: string;
      logPath: string;
      form?: [string, string][];
      beforeSend?: () => Promise<void>;
    } & Partial<CallHooks>,
    signal?: AbortSignal,
  ): Promise<string> {
    const info = { method: request.method, path: request.logPath };
    const response = await this.dispatch(
      request.method,
      request.path,
      info,
      request.form,
      signal,
      request.onSend,
      request.beforeSend,
    );
    request.onAnswer?.(response.statusCode);
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw new AdminNoAnswerError(
        `${request.method} ${request.logPath}: answer broke off: ${describe(error)}`,
        info,
        error,
      );
    }
    if (response.statusCode >= 300) throw this.httpError(response, text, info);
    return text;
  }

  private async dispatch(
    method: string,
    path: string,
    info: { method: string; path: string },
    form: [string, string][] | undefined,
    signal: AbortSignal | undefined,
    /** Told when the request leaves, after any wait of `beforeRequest` (for its duration). */
    onSend?: (at: number) => void,
    /** Runs after `beforeRequest`, last thing before the request leaves; may throw to stop it. */
    beforeSend?: () => Promise<void>,
  ): Promise<Dispatcher.ResponseData> {
    // A request waits for a connection here, not in the pool's queue: the gate and the caller's
    // last check (a cancel, a pause, a back-off) then run once it can really leave.
    let giveBack: () => void;
    try {
      giveBack = await this.slots.take(signal);
    } catch (error) {
      throw signal?.aborted ? new (await loadUndici()).errors.RequestAbortedError() : error;
    }
    let response: Dispatcher.ResponseData;
    try {
      await this.options.beforeRequest?.(signal);
      await beforeSend?.();
      onSend?.(performance.now());
      const pool = await this.openPool();
      response = await pool
        .request({
          method: method as Dispatcher.HttpMethod,
          path,
          ...this.encoded(form),
          signal,
        })
        .catch((error: unknown) => {
          throw this.transportError(error, info);
        });
    } catch (error) {
      giveBack();
      throw error;
    }
    // the slot is the connection: held until the answer is read or dropped
    response.body.once('close', giveBack);
    return response;
  }

  /** The headers of a request, and its form as the body in the configured encoding. */
  private encoded(form: [string, string][] | undefined): {
    headers: Record<string, string>;
    body?: string;
  } {
    const headers: Record<string, string> = { ...this.options.headers, ...this.authHeaders };
    if (!form) return { headers };
    if ((this.options.bodyEncoding ?? 'multipart') === 'urlencoded') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      return { headers, body: new URLSearchParams(form).toString() };
    }
    const multipart = multipartBody(form);
    headers['content-type'] = multipart.contentType;
    return { headers, body: multipart.body };
  }

  private transportError(error: unknown, info: { method: string; path: string }): Error {
    const code = (error as { code?: string } | null)?.code;
    if (code !== undefined && CONNECT_ERROR_CODES.has(code)) {
      return new AdminConnectionError(
        `cannot reach the admin server at ${this.baseUrl} (${code})`,
        info,
        error,
      );
    }
    const undiciErrors = undiciErrorsIfLoaded();
    if (
      (undiciErrors !== undefined && error instanceof undiciErrors.RequestAbortedError) ||
      (error as Error)?.name === 'AbortError'
    ) {
      return error as Error;
    }
    return new AdminNoAnswerError(
      `${info.method} ${info.path}: no answer from the admin server (${describe(error)})`,
      info,
      error,
    );
  }

  private httpError(
    response: Dispatcher.ResponseData,
    text: string,
    info: { method: string; path: string },
  ): AdminHttpError {
    const errorInfo: AdminErrorInfo & { status: number } = {
      ...info,
      status: response.statusCode,
      retryAfterMs: parseRetryAfter(response.headers['retry-after']),
    };
    const parsed = parseErrorBody(text);
    if (parsed) {
      errorInfo.errorcode = String(parsed.errorcode);
      if (parsed.index !== undefined) errorInfo.index = parsed.index;
    }
    const reason = parsed?.message ?? (text.slice(0, 200) || `HTTP ${response.statusCode}`);
    return new AdminHttpError(reason, errorInfo);
  }
}
