import { describe, expect, it } from 'vitest';
import { TokenBucketRateLimiter } from '../src/index.ts';

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('TokenBucketRateLimiter', () => {
  it('allows a burst, then the sustained rate', () => {
    const time = clock();
    const limiter = new TokenBucketRateLimiter({ perSecond: 10, burst: 5, clock: time });
    const burst = Array.from({ length: 7 }, () => limiter.take('t:a'));
    expect(burst).toEqual([true, true, true, true, true, false, false]);
    time.t += 100; // one token at 10/s
    expect([limiter.take('t:a'), limiter.take('t:a')]).toEqual([true, false]);
    time.t += 60_000; // refills only up to the burst
    expect(Array.from({ length: 6 }, () => limiter.take('t:a')).filter(Boolean)).toHaveLength(5);
  });

  it('keys are independent', () => {
    const limiter = new TokenBucketRateLimiter({ perSecond: 1, burst: 1, clock: clock() });
    expect([limiter.take('t1:a'), limiter.take('t1:a'), limiter.take('t1:b'), limiter.take('t2:a')]).toEqual([true, false, true, true]);
  });

  it('a clock going backwards does not mint tokens', () => {
    const time = clock();
    const limiter = new TokenBucketRateLimiter({ perSecond: 1, burst: 1, clock: time });
    limiter.take('k');
    time.t -= 10_000;
    expect(limiter.take('k')).toBe(false);
  });

  it('sweeps idle buckets so memory stays bounded, keeping busy ones', () => {
    const time = clock();
    const limiter = new TokenBucketRateLimiter({ perSecond: 10, burst: 2, clock: time, sweepAbove: 100 });
    for (let i = 0; i < 100; i++) limiter.take(`idle${i}`);
    limiter.take('busy');
    limiter.take('busy');
    time.t += 1000; // idle buckets refilled; busy one took its last token just now
    limiter.take('busy');
    limiter.take('busy');
    limiter.take('newcomer'); // map is full: triggers a sweep
    expect(limiter.size).toBeLessThan(10);
    expect(limiter.take('busy')).toBe(false); // its state survived the sweep
  });

  it('rejects nonsense settings', () => {
    expect(() => new TokenBucketRateLimiter({ perSecond: 0, burst: 1 })).toThrow(RangeError);
    expect(() => new TokenBucketRateLimiter({ perSecond: 1, burst: 0 })).toThrow(RangeError);
  });
});
