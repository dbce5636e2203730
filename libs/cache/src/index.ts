/**
 * Redis roles for distributed mode (docs/architecture.md, "Two deployments, one code path"), each a decorator or adapter over a port so the
 * rest of the code does not know Redis exists. Redis is never the only copy of anything
 * acknowledged: every cached answer is re-derivable from the durable stores, and any Redis
 * trouble degrades to reading them.
 */
export { CachedTimelineStore } from './timeline-cache.ts';
export type { CachedTimelineOptions, TimelineCacheStats } from './timeline-cache-options.ts';
export { CachedGroupStore, type CachedGroupOptions, type GroupCacheStats } from './group-cache.ts';
export { RedisRateLimiter, type RedisRateLimiterOptions, type RedisRateLimiterStats } from './rate-limiter.ts';
export { RedisHoldStore, type RedisHoldStoreOptions } from './hold-store.ts';
export { defaultLease, LeasedRateLimiter, type LeasedRateLimiterOptions, type TokenBuckets } from './rate-limit-lease.ts';
export { RedisEpochWatcher, type EpochChange, type RedisEpochWatcherOptions } from './epoch-watcher.ts';
export { createCacheRedisClient, type CacheRedisClientOptions } from './redis-client.ts';
export type { EpochSource, RedisCacheOptions } from './guard.ts';
