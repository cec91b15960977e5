/**
 * A sandbox on a free port with an AdminClient pointed at it, for contract tests over
 * real HTTP. Each test file (or test) gets its own instance, so tests never share state.
 */
import { afterEach, beforeEach } from 'vitest';
import { AdminClient, type AdminClientOptions } from '../../src/admin/client.js';
import { AdminError } from '../../src/admin/errors.js';
import {
  startSandbox,
  type RunningSandbox,
  type SandboxOptions,
} from '../../src/sandbox/server.js';
import type { SandboxStore } from '../../src/sandbox/store.js';

export interface TestSandbox {
  sandbox: RunningSandbox;
  /** A client carrying the sandbox's credentials, if it has any. */
  client: AdminClient;
  url: string;
  store: SandboxStore;
  /** Closes the client and the sandbox (idempotent). */
  close(): Promise<void>;
}

/** Starts a sandbox on port 0 and a client for it; `clientOptions` override the defaults. */
export async function startTestSandbox(
  options: SandboxOptions = {},
  clientOptions: Partial<AdminClientOptions> = {},
): Promise<TestSandbox> {
  const sandbox = await startSandbox({ ...options, port: 0 });
  const client = new AdminClient({
    baseUrl: sandbox.url,
    auth: { apiKey: options.apiKey, user: options.user, password: options.password },
    requestTimeoutMs: 10_000,
    ...clientOptions,
  });
  let closing: Promise<void> | undefined;
  return {
    sandbox,
    client,
    url: sandbox.url,
    store: sandbox.store,
    close: () =>
      (closing ??= (async () => {
        await client.close();
        await sandbox.close();
      })()),
  };
}

/** Runs `use` against a fresh sandbox and always closes it afterwards. */
export async function withSandbox<T>(
  options: SandboxOptions,
  use: (test: TestSandbox) => Promise<T>,
): Promise<T> {
  const test = await startTestSandbox(options);
  try {
    return await use(test);
  } finally {
    await test.close();
  }
}

/** A fresh sandbox for every test of the calling file; call the returned function inside a test. */
export function useSandbox(options: SandboxOptions = {}): () => TestSandbox {
  let current: TestSandbox | undefined;
  beforeEach(async () => {
    current = await startTestSandbox(options);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('useSandbox(): call the getter inside a test');
    return current;
  };
}

/** Runs `action` and returns the AdminError it throws; fails when it succeeds or throws something else. */
export async function adminFailure(action: () => Promise<unknown>): Promise<AdminError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof AdminError) return error;
    throw error;
  }
  throw new Error('expected the call to fail, and it succeeded');
}
