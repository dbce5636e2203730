/**
 * Token leases over the shared buckets: a gateway takes `lease` tokens from a user's bucket in
 * one call and spends them locally for up to `leaseMs`; those it has not spent by then are
 * dropped — never given back, never spent late. So most requests cost no Redis round trip and
 * no promise (the gateway serves a frame synchronously when the limiter answers so), and no
 * more tokens are spent across all gateways than the shared bucket hands out.
 *
 * The price: while one gateway holds up to lease − 1 unspent tokens, the user's other gateways
 * cannot have them, and a user sending slower than one lease per `leaseMs` loses the rest to
 * expiry. With the defaults (burst 400, lease 10, i.e. 2.5 % of a full bucket) neither is
 * noticeable. A bucket holding less than a lease is taken from one token at a time, so near
 * the limit it is enforced exactly as without leases.
 */
import { systemClock, TwoGenerationMap, type Clock } from '@seqline/core';

/** The shared buckets (RedisRateLimiter): take `cost` tokens or none. */
export interface TokenBuckets {
  take(key: string, cost?: number): Promise<boolean>;
  /** The bucket size, when known: a larger cost is charged as this (else it could never pass). */
  readonly burst?: number;
}

export interface LeasedRateLimiterOptions {
  /** Tokens taken from the shared bucket at once (1 = no leasing). */
  lease: number;
  /** How long a lease's tokens may be spent. Default 1 000 ms. */
  leaseMs?: number;
  /** Most keys holding a lease (least recently leased dropped first). Default 100 000. */
  maxKeys?: number;
  clock?: Clock;
}

/** `single`: the bucket could not cover a lease; until `until`, take one token per request. */
interface Lease {
  tokens: number;
  until: number;
  single: boolean;
}

/** The default lease for a bucket of `burst` tokens: 1/40 of it, 1 to 10 tokens. */
export function defaultLease(burst: number): number {
  return Math.max(1, Math.min(10, Math.floor(burst / 40)));
}

export class LeasedRateLimiter {
  private readonly leases: TwoGenerationMap<string, Lease>;
  /** Keys whose lease is being taken: later takes wait for it instead of asking too. */
  private readonly leasing = new Map<string, Promise<void>>();
  private readonly lease: number;
  private readonly leaseMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly buckets: TokenBuckets,
    options: LeasedRateLimiterOptions,
  ) {
    if (!Number.isInteger(options.lease) || options.lease < 1)
      throw new RangeError(`lease must be a positive integer, got ${options.lease}`);
    this.lease = options.lease;
    this.leaseMs = options.leaseMs ?? 1000;
    this.clock = options.clock ?? systemClock;
    this.leases = new TwoGenerationMap(options.maxKeys ?? 100_000);
  }

  /**
   * Takes `cost` tokens (default 1) for `key`: at once from a live lease holding that many, else
   * from the shared bucket (a lease of at least `cost`; a lease's remainder too small for a
   * costly frame is dropped like an expired one).
   */
  take(key: string, cost = 1): boolean | Promise<boolean> {
    const charge = Math.min(Number.isFinite(cost) && cost > 1 ? Math.ceil(cost) : 1, this.buckets.burst ?? Infinity);
    return this.spend(key, charge) || this.refill(key, charge);
  }

  private spend(key: string, cost: number): boolean {
    const lease = this.leases.get(key);
    if (lease === undefined || lease.tokens < cost || lease.until <= this.clock.now()) return false;
    lease.tokens -= cost;
    return true;
  }

  private async refill(key: string, cost: number): Promise<boolean> {
    const leasing = this.leasing.get(key);
    if (leasing !== undefined) {
      await leasing;
      // The lease ran out before this take's turn: the next one (or a single take).
      return this.spend(key, cost) || this.refill(key, cost);
    }
    const known = this.leases.get(key);
    // Without leasing, or near the limit (a user being refused must not cost two calls a request).
    if (this.lease === 1 || (known?.single === true && known.until > this.clock.now())) return this.buckets.take(key, cost);
    const size = Math.max(this.lease, cost);
    let leased = false;
    const taking = this.buckets.take(key, size).then((ok) => {
      leased = ok;
      this.leases.set(key, { tokens: ok ? size - cost : 0, until: this.clock.now() + this.leaseMs, single: !ok });
    });
    const waitable = taking.catch(() => undefined);
    this.leasing.set(key, waitable);
    try {
      await taking;
    } finally {
      if (this.leasing.get(key) === waitable) this.leasing.delete(key);
    }
    // Less than a lease left in the bucket: just this take's cost, as without leases.
    return leased || this.buckets.take(key, cost);
  }
}
