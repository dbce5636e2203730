/**
 * The port contract suites against the Redis decorators over the embedded LMDB engine:
 * with a healthy Redis (default and tiny cache sizes, head from cache) and with a Redis that
 * cannot be reached at all (everything must still hold, from the durable store alone).
 */
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Redis } from 'ioredis';
import type { GroupStore, TimelineStore } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { groupStoreContract, timelineDecoratorContract, timelineStoreContract, type StoreOpener } from '@seqline/testing';
import { CachedGroupStore, CachedTimelineStore, createCacheRedisClient, type CachedTimelineOptions } from '../src/index.ts';
import { connectRedis, deleteKeys, describeWithRedis, freePort, probeRedis, tempDir, uniquePrefix } from './harness.ts';

const root = tempDir('contracts');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  root.remove();
});

type Decorate<T> = (engine: EmbeddedEngine, redis: Redis, keyPrefix: string) => T & { close(): void };

/** Same dataKey → same LMDB directory and same Redis prefix: a reopen is a process restart. */
function opener<T>(label: string, connect: () => Promise<Redis>, decorate: Decorate<T>): StoreOpener<T> {
  const keyPrefix = uniquePrefix();
  cleanups.push(async () => {
    const redis = await connect();
    if (redis.status === 'ready') await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });
  return async (dataKey) => {
    const engine = await openEmbeddedEngine({ dir: join(root.dir, label, dataKey) });
    const redis = await connect();
    const store = decorate(engine, redis, keyPrefix);
    return {
      store,
      close: async () => {
        store.close();
        redis.disconnect();
        await engine.close();
      },
    };
  };
}

const timeline =
  (options: Partial<CachedTimelineOptions> = {}): Decorate<TimelineStore> =>
  (engine, redis, keyPrefix) =>
    new CachedTimelineStore(engine.timeline, { redis, keyPrefix, ...options });
const groups: Decorate<GroupStore> = (engine, redis, keyPrefix) => new CachedGroupStore(engine.groups, { redis, keyPrefix });

const probe = await probeRedis();
describeWithRedis('redis decorators (live Redis)', probe, () => {
  const live = (): Promise<Redis> => connectRedis();
  timelineStoreContract('redis cache over LMDB', opener('tl', live, timeline()));
  timelineStoreContract(
    'redis cache over LMDB, 3 entries per inbox, head from cache',
    opener('tl-small', live, timeline({ maxEntries: 3, dedupMaxPerInbox: 2, headSeqFromCache: true })),
  );
  groupStoreContract('redis cache over LMDB', opener('grp', live, groups));
  timelineDecoratorContract('redis cache', async (inner) => {
    const redis = await live();
    const store = new CachedTimelineStore(inner, { redis, keyPrefix: uniquePrefix() });
    return { store, close: async () => (store.close(), redis.disconnect()) };
  });
});

// No Redis at all: a closed port, so every Redis call fails at once and the store answers.
const closedPort = await freePort();
const unreachable = async (): Promise<Redis> => createCacheRedisClient({ url: `redis://127.0.0.1:${closedPort}` });
timelineStoreContract('redis cache over LMDB, Redis unreachable', opener('tl-down', unreachable, timeline({ headSeqFromCache: true })));
groupStoreContract('redis cache over LMDB, Redis unreachable', opener('grp-down', unreachable, groups));
timelineDecoratorContract('redis cache, Redis unreachable', async (inner) => {
  const redis = await unreachable();
  const store = new CachedTimelineStore(inner, { redis, keyPrefix: uniquePrefix() });
  return { store, close: async () => (store.close(), redis.disconnect()) };
});
