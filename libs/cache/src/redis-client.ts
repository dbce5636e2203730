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
  // ioredis keeps the commands a dropped connection left unanswered and, with resending off,
  // forgets them when a reconnect succeeds at once — without settling them. An auto-pipeline
  // among them then never finishes, and every later command queues behind it for good: a
  // worker that slept through a Redis restart could renew no lease again (docs/faults.md,
  // round b1747661). They are rejected as the connection closes (before any reconnect: its
  // first attempt waits at least 100 ms).
  redis.on('close', () => rejectUnanswered(redis));
  // Without a listener ioredis prints every connection error; one warning per interval is enough.
  const warning = new ThrottledWarning(logger, 30_000);
  redis.on('error', (err: unknown) => warning.warn({ err, url: redactUrl(options.url) }, 'redis connection error'));
  return redis;
}

/** What ioredis keeps of a dropped connection's commands (not in its typings). */
interface UnansweredQueue {
  prevCommandQueue?: { shift(): { command: { reject(err: Error): void } } | undefined } | null;
}

function rejectUnanswered(redis: Redis): void {
  const queue = (redis as unknown as UnansweredQueue).prevCommandQueue;
  if (!queue) return;
  const err = new Error('Redis connection closed before the command was answered');
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) item.command.reject(err);
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
