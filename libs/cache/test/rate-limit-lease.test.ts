/** LeasedRateLimiter: leases over the shared buckets never spend more than the buckets hand out. */
import { describe, expect, it } from 'vitest';
import { defaultLease, LeasedRateLimiter, RedisRateLimiter, type TokenBuckets } from '../src/index.ts';
import { describeWithRedis, probeRedis, useRedisPerSuite } from './harness.ts';

/** A bucket with a fixed number of tokens (no refill), counting the calls made to it. */
class CountedBucket implements TokenBuckets {
  calls: number[] = [];
  constructor(public tokens: number) {}
  async take(_key: string, cost = 1): Promise<boolean> {
    this.calls.push(cost);
    if (cost > this.tokens) return false;
    this.tokens -= cost;
    return true;
  }
}

const takeAll = (limiter: LeasedRateLimiter, key: string, n: number) =>
  Promise.all(Array.from({ length: n }, async () => limiter.take(key)));

describe('LeasedRateLimiter', () => {
  it('spends a lease locally and synchronously: one bucket call per lease', async () => {
    const bucket = new CountedBucket(100);
    const limiter = new LeasedRateLimiter(bucket, { lease: 10, clock: { now: () => 0 } });
    expect(await limiter.take('u')).toBe(true);
    for (let i = 0; i < 9; i++) expect(limiter.take('u')).toBe(true); // not a promise
    expect(bucket.calls).toEqual([10]);
    expect(await limiter.take('u')).toBe(true);
    expect(bucket.calls).toEqual([10, 10]);
  });

  it('never allows more than the bucket holds; below a lease it takes one token at a time', async () => {
    const bucket = new CountedBucket(25);
    const limiter = new LeasedRateLimiter(bucket, { lease: 10, clock: { now: () => 0 } });
    const results = [];
    for (let i = 0; i < 30; i++) results.push(await limiter.take('u'));
    expect(results.filter(Boolean)).toHaveLength(25);
    expect(results.slice(25)).toEqual([false, false, false, false, false]);
    // Two leases, one refused lease, then single tokens: no request costs two calls after that.
    expect(bucket.calls).toEqual([10, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('drops what a lease did not spend in time, and leases again after a refusal period', async () => {
    let now = 0;
    const bucket = new CountedBucket(15);
    const limiter = new LeasedRateLimiter(bucket, { lease: 10, leaseMs: 1000, clock: { now: () => now } });
    expect(await limiter.take('u')).toBe(true); // 9 left in the lease, 5 in the bucket
    now = 1000;
    expect(await limiter.take('u')).toBe(true); // the lease expired: 10 > 5, one token
    expect(bucket.calls).toEqual([10, 10, 1]);
    bucket.tokens += 20;
    expect(await limiter.take('u')).toBe(true); // still in the refusal period: one token
    now = 2000;
    expect(await limiter.take('u')).toBe(true); // leases again
    expect(bucket.calls).toEqual([10, 10, 1, 1, 10]);
  });

  it('concurrent takes wait for one lease instead of each asking the bucket', async () => {
    const bucket = new CountedBucket(100);
    const limiter = new LeasedRateLimiter(bucket, { lease: 10, clock: { now: () => 0 } });
    expect(await takeAll(limiter, 'u', 12)).toEqual(Array.from({ length: 12 }, () => true));
    expect(bucket.calls).toEqual([10, 10]);
  });

  it('a lease of 1 is the bucket itself; bad leases are refused', async () => {
    const bucket = new CountedBucket(2);
    const limiter = new LeasedRateLimiter(bucket, { lease: 1 });
    expect(await takeAll(limiter, 'u', 3)).toEqual([true, true, false]);
    expect(bucket.calls).toEqual([1, 1, 1]);
    expect(() => new LeasedRateLimiter(bucket, { lease: 0 })).toThrow(RangeError);
    expect(() => new LeasedRateLimiter(bucket, { lease: 2.5 })).toThrow(RangeError);
    expect([defaultLease(1), defaultLease(100), defaultLease(400), defaultLease(100_000)]).toEqual([1, 2, 10, 10]);
  });
});

const probe = await probeRedis();

describeWithRedis('LeasedRateLimiter over RedisRateLimiter (live Redis)', probe, () => {
  const shared = useRedisPerSuite();
  const { keyPrefix } = shared;

  const gateways = (burst: number) => {
    const now = 1_000_000; // no refill during a test
    return [0, 1].map(() => {
      const buckets = new RedisRateLimiter({ redis: shared.redis, keyPrefix, perSecond: 1, burst, clock: { now: () => now } });
      return { buckets, limiter: new LeasedRateLimiter(buckets, { lease: 10 }) };
    });
  };
  const callsTo = (pair: { buckets: RedisRateLimiter }[]) =>
    pair.reduce((sum, { buckets }) => sum + buckets.stats().allowed + buckets.stats().refused, 0);

  it('two gateways under the limit: every take allowed, about one Redis call per lease', async () => {
    const pair = gateways(95);
    const results = await Promise.all(pair.map(({ limiter }) => takeAll(limiter, 'carol', 40)));
    expect(results.flat().every(Boolean)).toBe(true);
    expect(callsTo(pair)).toBeLessThanOrEqual(10); // against 80 without leases
  });

  it('two gateways over the limit together never allow more than the bucket holds', async () => {
    const pair = gateways(95);
    const results = await Promise.all(pair.map(({ limiter }) => takeAll(limiter, 'dave', 80)));
    const allowed = results.flat().filter(Boolean).length;
    // At most the burst; at worst each gateway's last lease is left partly unspent.
    expect(allowed).toBeLessThanOrEqual(95);
    expect(allowed).toBeGreaterThanOrEqual(95 - 2 * 9);
  });
});
