/**
 * The sandbox: porter's own complete implementation of the admin interface spec, serving
 * /wf/restapi/v2/admin/ from memory (optionally a data file), with injectable faults.
 * It is the default target of every porter command and the peer of every test.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { listenOn } from '../util/listen.js';
import { createSandbox } from './app.js';
import type { FaultOptions, SandboxOptions } from './options.js';
import type { SandboxStore } from './store.js';

export type { FaultOptions, SandboxOptions, SeedOptions } from './options.js';
export { DEFAULT_FAULTS } from './options.js';
export type { SandboxStore } from './store.js';
export type { SandboxStats } from './stats.js';
export { SANDBOX_ERRORS, type SandboxErrorCode } from './errors.js';

/** A listening sandbox, as startSandbox returns it. */
export interface RunningSandbox {
  /** Origin to point clients at, e.g. http://127.0.0.1:PORT. */
  url: string;
  port: number;
  store: SandboxStore;
  /** Changes injected faults at run time; unnamed ones keep their value. */
  setFaults(faults: Partial<FaultOptions>): void;
  /** The faults in force. */
  faults(): Readonly<FaultOptions>;
  /** Stops listening, lets requests in flight finish, and flushes the data file. Idempotent. */
  close(): Promise<void>;
}

/** Builds the sandbox's fastify app without listening (for `inject()` in tests). */
export async function buildSandboxApp(options: SandboxOptions = {}): Promise<FastifyInstance> {
  return (await createSandbox(options)).app;
}

/** Starts a sandbox listening on host:port (port 0 picks a free one). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const { app, store, faults } = await createSandbox(options);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  await listenOn(app, {
    host,
    port,
    what: 'sandbox',
    flags: options.addressFlags ?? '--host or --port',
  });
  const address = app.server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${clientHost(address.address)}:${address.port}`,
    port: address.port,
    store,
    setFaults: (changes) => faults.update(changes),
    faults: () => faults.options,
    close: () => (closing ??= app.close()),
  };
}

/** A host a client can connect to: wildcard addresses become loopback, IPv6 gets brackets. */
function clientHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}
