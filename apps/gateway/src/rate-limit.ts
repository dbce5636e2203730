/** Per-user rate limiting behind a port, so a shared (Redis) limiter can replace the in-memory one. */
import { systemClock, TwoGenerationMap, type Clock } from '@seqline/core';

export interface RateLimiter {
  /**
   * Takes `cost` tokens (default 1) for `key`; false when the key is over its rate (nothing is
   * taken then). May be async (shared store). A cost above the bucket's size is charged as the
   * whole bucket, so that any frame the transport accepts can pass a full bucket.
   */
  take(key: string, cost?: number): boolean | Promise<boolean>;
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

  take(key: string, cost = 1): boolean {
    const charge = Math.min(Number.isFinite(cost) && cost > 1 ? cost : 1, this.options.burst);
    const now = this.clock.now();
    const bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.sweepAbove) this.sweep(now);
      this.buckets.set(key, { tokens: this.options.burst - charge, updatedAt: now });
      return true;
    }
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + elapsed * this.perMs);
    bucket.updatedAt = now;
    if (bucket.tokens < charge) return false;
    bucket.tokens -= charge;
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

/**
 * Remembers the inner limiter's refusal of `key` for `cacheMs`: the key's next takes are refused
 * from memory, so a sender over its rate costs no limiter call (no Redis round trip, no promise)
 * and no decoding until it may pass again. Tokens are not lost: a refusal takes none. Not a hold
 * (core's holds.ts): only the rate's answer, cached; upgrades are not refused by it.
 */
export class RateRefusalCache implements RateLimiter {
  /** key → until (epoch ms), bounded: a forgotten refusal costs one limiter call. */
  private readonly refusedUntil: TwoGenerationMap<string, number>;

  constructor(
    private readonly inner: RateLimiter,
    private readonly cacheMs: number,
    private readonly clock: Clock = systemClock,
    maxKeys = 100_000,
  ) {
    this.refusedUntil = new TwoGenerationMap(maxKeys);
  }

  take(key: string, cost?: number): boolean | Promise<boolean> {
    if ((this.refusedUntil.get(key) ?? 0) > this.clock.now()) return false;
    const allowed = this.inner.take(key, cost);
    if (allowed === true) return true;
    if (allowed === false) return this.refused(key);
    return allowed.then((ok) => ok || this.refused(key));
  }

  private refused(key: string): false {
    if (this.cacheMs > 0) this.refusedUntil.set(key, this.clock.now() + this.cacheMs);
    return false;
  }
}
