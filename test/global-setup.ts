/**
 * Makes sure a Redis answers for the tests: REDIS_URL if set, else 127.0.0.1:6379,
 * else a container through testcontainers where a Docker engine runs.
 */
import type { TestProject } from 'vitest/node';
import { Redis } from 'ioredis';

async function answers(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const candidate = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await answers(candidate)) {
    project.provide('redisUrl', candidate);
    return async () => {};
  }
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer('redis:7-alpine').start();
  project.provide('redisUrl', container.getConnectionUrl());
  return async () => {
    await container.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
