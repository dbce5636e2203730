/**
 * The HoldStore contract against both adapters — core's LocalHoldStore and RedisHoldStore on the
 * live Redis (two clients on one prefix: two gateways) — and RedisHoldStore without Redis: it
 * fails open, as the rate limiter does.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { LocalHoldStore } from '@seqline/core';
import { holdStoreContract } from '@seqline/testing';
import { createCacheRedisClient, RedisHoldStore } from '../src/index.ts';
import {
  blackHole,
  connectRedis,
  deleteKeys,
  describeWithRedis,
  freePort,
  probeRedis,
  recordingLogger,
  uniquePrefix,
  waitReady,
} from './harness.ts';

holdStoreContract('local (one process)', () => Promise.resolve({ store: new LocalHoldStore(), close: () => Promise.resolve() }), {
  sharedBetweenOpens: false,
});

const probe = await probeRedis();
describeWithRedis('RedisHoldStore (live Redis)', probe, () => {
  const keyPrefix = uniquePrefix();
  afterAll(async () => {
    const redis = await connectRedis();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  holdStoreContract(
    'redis',
    async () => {
      const redis = await connectRedis();
      return { store: new RedisHoldStore({ redis, keyPrefix }), close: () => Promise.resolve(redis.disconnect()) };
    },
    { sharedBetweenOpens: true },
  );

  it('is timed by Redis: the key carries the hold as its expiry, inside the user hash tag', async () => {
    const redis = await connectRedis();
    try {
      await new RedisHoldStore({ redis, keyPrefix }).hold({ key: 't1:alice', ms: 5000 });
      const ttl = await redis.pttl(`${keyPrefix}hold:{t1:alice}`);
      expect(ttl).toBeGreaterThan(4000);
      expect(ttl).toBeLessThanOrEqual(5000);
    } finally {
      redis.disconnect();
    }
  });
});

describe('RedisHoldStore without Redis: fails open', () => {
  it('unreachable: a hold is not recorded, nobody is held, nothing throws; one warning', async () => {
    const logger = recordingLogger();
    const redis = createCacheRedisClient({ url: `redis://127.0.0.1:${await freePort()}` });
    try {
      const store = new RedisHoldStore({ redis, logger });
      const started = Date.now();
      for (let i = 0; i < 10; i++) await store.hold({ key: 'mallory', ms: 60_000 });
      for (let i = 0; i < 10; i++) expect(await store.remainingMs({ key: 'mallory' })).toBe(0);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(logger.warnings).toHaveLength(1);
      expect(logger.warnings[0]?.msg).toMatch(/failing open/);
    } finally {
      redis.disconnect();
    }
  });

  it('hanging: answers within the timeout, as not held', async () => {
    const hole = await blackHole();
    const redis = new Redis(hole.url, { enableReadyCheck: false, disableClientInfo: true, maxRetriesPerRequest: 0 });
    redis.on('error', () => {});
    try {
      await waitReady(redis);
      const store = new RedisHoldStore({ redis, opTimeoutMs: 50 });
      const started = Date.now();
      await store.hold({ key: 'mallory', ms: 60_000 });
      expect(await Promise.all([store.remainingMs({ key: 'mallory' }), store.remainingMs({ key: 'x' })])).toEqual([0, 0]);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      redis.disconnect();
      await hole.close();
    }
  });
});
