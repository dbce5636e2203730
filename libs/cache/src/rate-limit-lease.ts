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
interface Lease { tokens: number; until: number; single: boolean }

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

  constructor(private readonly buckets: TokenBuckets, options: LeasedRateLimiterOptions) {
    if (!Number.isInteger(options.lease) || options.lease < 1) throw new RangeError(`lease must be a positive integer, got ${options.lease}`);
    this.lease = options.lease;
    this.leaseMs = options.leaseMs ?? 1000;
    this.clock = options.clock ?? systemClock;
    this.leases = new TwoGenerationMap(options.maxKeys ?? 100_000);
  }

  /** Takes one token for `key`: at once from a live lease, else from the shared bucket. */
  take(key: string): boolean | Promise<boolean> {
    return this.spend(key) || this.refill(key);
  }

  private spend(key: string): boolean {
    const lease = this.leases.get(key);
    if (lease === undefined || lease.tokens === 0 || lease.until <= this.clock.now()) return false;
    lease.tokens--;
    return true;
  }

  private async refill(key: string): Promise<boolean> {
    const leasing = this.leasing.get(key);
    if (leasing !== undefined) {
      await leasing;
      // The lease ran out before this take's turn: the next one (or a single token).
      return this.spend(key) || this.refill(key);
    }
    const known = this.leases.get(key);
    // Without leasing, or near the limit (a user being refused must not cost two calls a request).
    if (this.lease === 1 || (known?.single === true && known.until > this.clock.now())) return this.buckets.take(key, 1);
    let leased = false;
    const taking = this.buckets.take(key, this.lease).then((ok) => {
      leased = ok;
      this.leases.set(key, { tokens: ok ? this.lease - 1 : 0, until: this.clock.now() + this.leaseMs, single: !ok });
    });
    const waitable = taking.catch(() => undefined);
    this.leasing.set(key, waitable);
    try {
      await taking;
    } finally {
      if (this.leasing.get(key) === waitable) this.leasing.delete(key);
    }
    // Less than a lease left in the bucket: one token, as without leases.
    return leased || this.buckets.take(key, 1);
  }
}
