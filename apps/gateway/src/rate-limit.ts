/** Per-user rate limiting behind a port, so a shared (Redis) limiter can replace the in-memory one. */
import { systemClock, type Clock } from '@seqline/core';

export interface RateLimiter {
  /** Takes one token for `key`; false when the key is over its rate. May be async (shared store). */
  take(key: string): boolean | Promise<boolean>;
}

export interface TokenBucketOptions {
  /** Sustained rate: tokens added per second. */
  perSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet period. */
  burst: number;
  clock?: Clock;
  /** Idle buckets are swept once the map holds this many keys (bounds memory). */
  sweepAbove?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** In-process token buckets: correct per gateway process; limits add up across processes. */
export class TokenBucketRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly clock: Clock;
  private readonly perMs: number;
  private readonly sweepAbove: number;
  private nextSweepAt = 0;

  constructor(private readonly options: TokenBucketOptions) {
    if (!(options.perSecond > 0) || !(options.burst >= 1)) {
      throw new RangeError('rate limit needs perSecond > 0 and burst >= 1');
    }
    this.clock = options.clock ?? systemClock;
    this.perMs = options.perSecond / 1000;
    this.sweepAbove = options.sweepAbove ?? 10_000;
  }

  take(key: string): boolean {
    const now = this.clock.now();
    const bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.sweepAbove) this.sweep(now);
      this.buckets.set(key, { tokens: this.options.burst - 1, updatedAt: now });
      return true;
    }
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + elapsed * this.perMs);
    bucket.updatedAt = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Number of keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  /** A bucket that has refilled completely is the same as no bucket: drop it. */
  private sweep(now: number): void {
    if (now < this.nextSweepAt) return;
    const refillMs = this.options.burst / this.perMs;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.perMs >= this.options.burst) this.buckets.delete(key);
    }
    // If every key is active, sweeping again immediately would be wasted work.
    this.nextSweepAt = now + Math.min(refillMs, 1000);
  }
}
