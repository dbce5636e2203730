/** Per-user rate limiting behind a port, so a shared (Redis) limiter can replace the in-memory one. */
import { systemClock, type Clock } from '@seqline/core';

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

/** Keys refused until a time, bounded in number (the oldest holds go first when it is full). */
export class Holds {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly maxKeys = 100_000,
  ) {}

  isHeld(key: string): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (this.clock.now() < until) return true;
    this.until.delete(key);
    return false;
  }

  /** Holds `key` for `ms`; a longer hold already set stays. */
  hold(key: string, ms: number): void {
    if (ms <= 0) return;
    const now = this.clock.now();
    if ((this.until.get(key) ?? 0) >= now + ms) return;
    if (this.until.size >= this.maxKeys) {
      for (const [k, until] of this.until) if (until <= now) this.until.delete(k);
      // Still full: forget the oldest. A forgotten hold costs a limiter call, never admits past the limiter.
      for (const k of this.until.keys()) {
        if (this.until.size < this.maxKeys) break;
        this.until.delete(k);
      }
    }
    this.until.delete(key); // re-inserted last: the Map's order is the order holds were set
    this.until.set(key, now + ms);
  }
}

/**
 * After `key` is refused, refuses it again at once for `holdMs` without asking `inner`: a
 * sender over its rate then costs no limiter call (no Redis round trip, no promise) and no
 * decoding until it may pass again. Tokens are not lost: a refusal takes none.
 */
export class RefusalHold implements RateLimiter {
  private readonly holds: Holds;

  constructor(
    private readonly inner: RateLimiter,
    private readonly holdMs: number,
    clock: Clock = systemClock,
    maxKeys = 100_000,
  ) {
    this.holds = new Holds(clock, maxKeys);
  }

  take(key: string, cost?: number): boolean | Promise<boolean> {
    if (this.holds.isHeld(key)) return false;
    const allowed = this.inner.take(key, cost);
    if (allowed === true) return true;
    if (allowed === false) return this.refused(key);
    return allowed.then((ok) => ok || this.refused(key));
  }

  /** Refuses `key` for `ms` (longer than the usual hold: an abuser); a longer hold already set stays. */
  hold(key: string, ms: number): void {
    this.holds.hold(key, ms);
  }

  private refused(key: string): false {
    this.holds.hold(key, this.holdMs);
    return false;
  }
}
