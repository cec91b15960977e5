/**
 * The admin client's settings from the environment (ADMIN_* variables), in one place:
 * every porter process builds its client through this.
 */
import type { Env } from '../config/env.js';
import type { AdminClientOptions } from './client.js';

/** The variables the admin client reads. */
export type AdminEnv = Pick<
  Env,
  | 'ADMIN_BASE_URL'
  | 'ADMIN_API_KEY'
  | 'ADMIN_USER'
  | 'ADMIN_PASSWORD'
  | 'ADMIN_AUTH_MODE'
  | 'ADMIN_TIMEOUT_MS'
  | 'ADMIN_CONNECT_TIMEOUT_MS'
  | 'ADMIN_EXTRA_HEADERS'
>;

/** Client options from the environment: base URL, credentials, auth mode, timeouts, headers. */
export function adminClientOptionsFromEnv(env: AdminEnv): AdminClientOptions {
  return {
    baseUrl: env.ADMIN_BASE_URL,
    auth: {
      apiKey: env.ADMIN_API_KEY,
      user: env.ADMIN_USER,
      password: env.ADMIN_PASSWORD,
      userPasswordMode: env.ADMIN_AUTH_MODE,
    },
    requestTimeoutMs: env.ADMIN_TIMEOUT_MS,
    connectTimeoutMs: env.ADMIN_CONNECT_TIMEOUT_MS,
    headers: env.ADMIN_EXTRA_HEADERS,
  };
}
