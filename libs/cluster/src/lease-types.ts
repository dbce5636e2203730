/** The shape of a shard lease and the options of RedisShardLeases (shard-leases.ts). */
import type { HandoverReason, Logger, SeqCeilingStore } from '@seqline/core';
import type { Redis } from 'ioredis';

export interface RedisShardLeasesOptions {
  redis: Redis;
  /** Durable source of epochs (CQL LWT in distributed mode). */
  ceilings: SeqCeilingStore;
  /** Unique per process; must not contain '|'. */
  ownerId: string;
  /** Lease time to live. Default 10 s; renewed every ttl/3. */
  ttlMs?: number;
  /** Safety margin for rules (a) and (b). Default max(ttl/10, 50 ms). */
  marginMs?: number;
  /** Redis key prefix. Default `seqline:`. */
  keyPrefix?: string;
  logger?: Logger;
  /** Monotonic clock in ms. Default `performance.now`. */
  now?: () => number;
  /** Wall clock in ms since 1970, for release records (handoverWait). Default `Date.now`. */
  wallClock?: () => number;
}

export interface ReleaseOptions {
  /**
   * The caller vouches that nothing writes with this lease any more and every write made with
   * it has settled (its writers closed). Only then, and only when the lease was writable up to
   * now (its own wait was over, it was not lost or self-fenced), is the release recorded in the
   * durable store so that the next holder may skip the wait-out. Default false.
   */
  stopped?: boolean;
}

export interface ShardLease {
  readonly shard: number;
  /** `<ownerId>|<nonce>`: unique per acquisition, so a re-acquired shard is a new lease. */
  readonly token: string;
  /** From the ceiling store: every InboxOwner of this lease claims its section with it. */
  readonly epoch: number;
  /** run_id of the Redis instance that granted the lease. */
  readonly runId: string;
  /** Monotonic time before which this lease must not be written with (rule a). */
  readonly writableAt: number;
  /** Why the wait before `writableAt` is what it is (core's handoverWait). */
  readonly handover: HandoverReason;
  /** Monotonic start time of the last successful acquire/renew (rule b). */
  readonly renewStartedAt: number;
  /** Set once the lease is lost or released; never cleared. */
  readonly lostReason: string | undefined;
}

/** The lease as RedisShardLeases keeps it (callers get the readonly ShardLease). */
export interface MutableLease {
  shard: number;
  token: string;
  epoch: number;
  runId: string;
  writableAt: number;
  handover: HandoverReason;
  renewStartedAt: number;
  lostReason: string | undefined;
}

export type LeaseState = 'waiting' | 'writable' | 'fenced' | 'lost';
export type LeaseLostListener = (lease: ShardLease, reason: string) => void;
