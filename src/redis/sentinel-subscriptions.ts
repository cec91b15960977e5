/**
 * A Sentinel client that follows failovers at once (`failoverDetector`) holds a subscription to
 * `+switch-master` on each Sentinel. ioredis 6 ends them on `disconnect()` but not on `quit()`
 * (redis/ioredis#1362), and BullMQ closes its connections with `quit()`: the subscriptions stay,
 * reconnect to Sentinels that are gone, and keep the process from exiting once its work is done.
 *
 * This ends them whenever the client ends, for the client and every duplicate made of it (BullMQ
 * makes its own for its workers and queues).
 */
import type { Redis } from 'ioredis';

interface WithConnector {
  connector: { disconnect(): void };
}

/** Makes the client's Sentinel subscriptions end with it, and those of its duplicates. */
export function endSubscriptionsWithClient(redis: Redis): Redis {
  // the connector's disconnect ends the subscriptions too; on a closed connection it does nothing else
  redis.on('end', () => (redis as unknown as WithConnector).connector.disconnect());
  const duplicate = redis.duplicate.bind(redis);
  redis.duplicate = ((override?: Parameters<Redis['duplicate']>[0]) =>
    endSubscriptionsWithClient(duplicate(override))) as Redis['duplicate'];
  return redis;
}
