/** LeasedRateLimiter with costs (the gateway charges 1 + bytes/4096 per frame). */
import { describe, expect, it } from 'vitest';
import { LeasedRateLimiter, type TokenBuckets } from '../src/index.ts';

/** A bucket with a fixed number of tokens (no refill), counting the costs asked of it. */
class CountedBucket implements TokenBuckets {
  calls: number[] = [];
  constructor(
    public tokens: number,
    readonly burst?: number,
  ) {}
  async take(_key: string, cost = 1): Promise<boolean> {
    this.calls.push(cost);
    if (cost > this.tokens || (this.burst !== undefined && cost > this.burst)) return false;
    this.tokens -= cost;
    return true;
  }
}

describe('LeasedRateLimiter with costs', () => {
  it('spends a cost from a lease holding enough, else leases at least that cost', async () => {
    const bucket = new CountedBucket(100);
    const limiter = new LeasedRateLimiter(bucket, { lease: 10, clock: { now: () => 0 } });
    expect(await limiter.take('u', 4)).toBe(true); // lease 10, 6 left
    expect(limiter.take('u', 6)).toBe(true); // synchronous, from the lease
    expect(await limiter.take('u', 17)).toBe(true); // a lease of 17, all spent
    expect(bucket.calls).toEqual([10, 17]);
    expect(bucket.tokens).toBe(73);
  });

  it('never spends more than the bucket holds; near the limit it asks for the exact cost', async () => {
    const bucket = new CountedBucket(20);
    const limiter = new LeasedRateLimiter(bucket, { lease: 10, clock: { now: () => 0 } });
    expect(await limiter.take('u', 17)).toBe(true); // 3 left in the bucket
    expect(await limiter.take('u', 17)).toBe(false);
    expect(await limiter.take('u', 3)).toBe(true);
    expect(bucket.tokens).toBe(0);
  });

  it('caps a cost at the bucket size when the bucket tells it, so a big frame can pass a full bucket', async () => {
    const bucket = new CountedBucket(5, 5);
    const limiter = new LeasedRateLimiter(bucket, { lease: 1, clock: { now: () => 0 } });
    expect(await limiter.take('u', 65)).toBe(true);
    expect(bucket.calls).toEqual([5]);
    expect(await limiter.take('u')).toBe(false);
  });
});
