/** An ioredis client set up for a cache: fail fast while disconnected, keep reconnecting. */
import { Redis } from 'ioredis';
import { silentLogger, type Logger } from '@seqline/core';
import { ThrottledWarning } from './guard.ts';

export interface CacheRedisClientOptions {
  /** e.g. `redis://127.0.0.1:6379/0` (REDIS_URL). */
  url: string;
  logger?: Logger;
  /** Connection attempt timeout. Default 2000 ms. */
  connectTimeoutMs?: number;
}

export function createCacheRedisClient(options: CacheRedisClientOptions): Redis {
  const logger = (options.logger ?? silentLogger).child({ component: 'redis' });
  const redis = new Redis(options.url, {
    // While disconnected a cache call must fail at once (the caller falls back to the
    // store), not wait in an offline queue until Redis is back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Commands cut off by a disconnect were already given up on by the caller.
    autoResendUnfulfilledCommands: false,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    retryStrategy: (attempt) => Math.min(100 * attempt, 2_000),
    // Commands issued in one event-loop turn go out in one write (and Redis reads them in one
    // read): a worker's appends resolve in batches, each with its cache and dedup scripts.
    enableAutoPipelining: true,
  });
  // Without a listener ioredis prints every connection error; one warning per interval is enough.
  const warning = new ThrottledWarning(logger, 30_000);
  redis.on('error', (err: unknown) => warning.warn({ err, url: redactUrl(options.url) }, 'redis connection error'));
  return redis;
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
