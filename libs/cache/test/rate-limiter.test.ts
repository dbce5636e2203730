/** RedisRateLimiter: buckets on the live Redis, atomic across processes, fail-open when Redis is gone. */
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createCacheRedisClient, RedisRateLimiter, type RedisRateLimiterOptions } from '../src/index.ts';
import {
  blackHole,
  connectRedis,
  describeWithRedis,
  freePort,
  probeRedis,
  recordingLogger,
  sleep,
  useRedisPerSuite,
  waitReady,
} from './harness.ts';

const probe = await probeRedis();

describeWithRedis('RedisRateLimiter (live Redis)', probe, () => {
  const shared = useRedisPerSuite();
  const { keyPrefix } = shared;

  const limiter = (
    options: Partial<RedisRateLimiterOptions> & Pick<RedisRateLimiterOptions, 'perSecond' | 'burst'>,
    client = shared.redis,
  ): RedisRateLimiter => new RedisRateLimiter({ redis: client, keyPrefix, ...options });
  const takes = async (rl: RedisRateLimiter, key: string, n: number): Promise<boolean[]> => {
    const out: boolean[] = [];
    for (let i = 0; i < n; i++) out.push(await rl.take(key));
    return out;
  };

  it('allows a burst, then refuses, then refills at the rate (injected clock)', async () => {
    let now = 1_000_000;
    const rl = limiter({ perSecond: 10, burst: 3, clock: { now: () => now } });
    expect(await takes(rl, 'alice', 4)).toEqual([true, true, true, false]);
    now += 50; // half a token
    expect(await rl.take('alice')).toBe(false);
    now += 50;
    expect(await takes(rl, 'alice', 2)).toEqual([true, false]);
    now += 60_000; // refills to the burst, not beyond
    expect(await takes(rl, 'alice', 4)).toEqual([true, true, true, false]);
    expect(rl.stats()).toEqual({ allowed: 7, refused: 4, failedOpen: 0 });
  });

  it('refills on the Redis server clock', async () => {
    const rl = limiter({ perSecond: 10, burst: 2, name: 'server-clock' });
    expect(await takes(rl, 'bob', 3)).toEqual([true, true, false]);
    await sleep(150); // 1.5 tokens
    expect(await takes(rl, 'bob', 2)).toEqual([true, false]);
  });

  it('weighs costs; a cost above the burst is never allowed; a bad cost throws', async () => {
    let now = 5_000;
    const rl = limiter({ perSecond: 1, burst: 3, name: 'cost', clock: { now: () => now } });
    expect(await rl.take('c', 2)).toBe(true);
    expect(await rl.take('c', 2)).toBe(false); // 1 left, and a refusal takes nothing
    expect(await rl.take('c', 1)).toBe(true);
    now += 100_000;
    expect(await rl.take('c', 4)).toBe(false);
    await expect(rl.take('c', 0)).rejects.toBeInstanceOf(RangeError);
    await expect(rl.take('c', Number.NaN)).rejects.toBeInstanceOf(RangeError);
    expect(() => limiter({ perSecond: 0, burst: 1 })).toThrow(RangeError);
  });

  it('keys and limit names are independent', async () => {
    const send = limiter({ perSecond: 0.001, burst: 1, name: 'send' });
    const login = limiter({ perSecond: 0.001, burst: 1, name: 'login' });
    expect(await send.take('u1')).toBe(true);
    expect(await send.take('u1')).toBe(false);
    expect(await send.take('u2')).toBe(true);
    expect(await login.take('u1')).toBe(true);
  });

  it('is atomic across processes: concurrent takes never exceed the burst', async () => {
    const others = await Promise.all([connectRedis(), connectRedis(), connectRedis()]);
    try {
      const limiters = [shared.redis, ...others].map((client) => limiter({ perSecond: 0.001, burst: 10, name: 'shared' }, client));
      const results = await Promise.all(
        Array.from({ length: 80 }, (_, i) => (limiters[i % limiters.length] as RedisRateLimiter).take('hot')),
      );
      expect(results.filter(Boolean)).toHaveLength(10);
    } finally {
      for (const client of others) client.disconnect();
    }
  });

  it('a bucket expires once it would be full again', async () => {
    const rl = limiter({ perSecond: 10, burst: 5, name: 'ttl' });
    await rl.take('k', 3);
    const ttl = await shared.redis.pttl(`${keyPrefix}rl:ttl:{k}`);
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(300 + 1_000);
  });
});

describe('RedisRateLimiter without Redis: fails open', () => {
  it('allows every take when Redis is unreachable, and warns once per interval', async () => {
    const logger = recordingLogger();
    const redis = createCacheRedisClient({ url: `redis://127.0.0.1:${await freePort()}` });
    try {
      const rl = new RedisRateLimiter({ redis, perSecond: 1, burst: 1, logger });
      const started = Date.now();
      for (let i = 0; i < 20; i++) expect(await rl.take('anyone')).toBe(true);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(rl.stats()).toEqual({ allowed: 0, refused: 0, failedOpen: 20 });
      expect(logger.warnings).toHaveLength(1);
      expect(logger.warnings[0]?.msg).toMatch(/failing open/);
    } finally {
      redis.disconnect();
    }
  });

  it('allows when Redis hangs (timeout), without waiting longer than the timeout', async () => {
    const hole = await blackHole();
    // No ready check: the client believes it is connected, so commands are sent and never answered.
    const redis = new Redis(hole.url, { enableReadyCheck: false, disableClientInfo: true, maxRetriesPerRequest: 0 });
    redis.on('error', () => {});
    try {
      await waitReady(redis);
      const rl = new RedisRateLimiter({ redis, perSecond: 1, burst: 1, opTimeoutMs: 50 });
      const started = Date.now();
      expect(await Promise.all([rl.take('a'), rl.take('a'), rl.take('b')])).toEqual([true, true, true]);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(rl.stats().failedOpen).toBe(3);
    } finally {
      redis.disconnect();
      await hole.close();
    }
  });
});
