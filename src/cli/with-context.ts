/** Runs a command body with a porter context built from the environment, closed afterwards. */
import { createPorterContext, type PorterContext } from '../app/context.js';
import { loadEnv } from '../config/env.js';
import { createLogger } from '../util/logger.js';

export async function withContext<T>(body: (context: PorterContext) => Promise<T>): Promise<T> {
  const env = loadEnv();
  // commands print for people; the log only says what went wrong
  const logger = createLogger({ level: env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL });
  const context = await createPorterContext(env, { logger });
  try {
    return await body(context);
  } finally {
    await context.close();
  }
}
