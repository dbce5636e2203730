/**
 * Shard leases in Redis (`<prefix>lease:<shard>` → `<ownerId>|<nonce>`, PX ttl), acquired,
 * renewed and released with Lua compare-and-set. Redis only arbitrates *who* may write; it is
 * never trusted for anything that must not roll back:
 *
 * - the epoch comes from the durable SeqCeilingStore (`drawEpoch('shard-<n>')`), and a ceiling
 *   write with a stale epoch is fenced there;
 * - (a) a fresh lease is writable only after one full ttl + margin, because a previous holder
 *   may still believe it holds the shard (the key can vanish by FLUSHALL, restart, failover) —
 *   unless the durable record says nobody can (core's handoverWait: the shard never had an
 *   epoch, or the epoch right before ours was released cleanly, recorded by `release`);
 * - (b) a holder fences itself when its last successful renewal STARTED more than
 *   ttl − margin ago (monotonic clock), so a paused process refuses writes on waking up;
 * - (c) a lease is valid only on the Redis instance (`run_id`) that granted it; a renewal that
 *   finds the key missing, owned by another, or another run_id loses the lease for good.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { handoverWait, silentLogger } from '@seqline/core';
import type { DrawnEpoch, Logger, SeqCeilingStore } from '@seqline/core';
import type { Redis } from 'ioredis';
import type { LeaseLostListener, LeaseState, MutableLease, RedisShardLeasesOptions, ReleaseOptions, ShardLease } from './lease-types.ts';
import { ACQUIRE_LUA, RELEASE_LUA, RENEW_LUA, parseCasReply, runScript } from './redis-scripts.ts';

export type { LeaseLostListener, LeaseState, RedisShardLeasesOptions, ReleaseOptions, ShardLease } from './lease-types.ts';

export class RedisShardLeases {
  readonly ownerId: string;
  readonly ttlMs: number;
  readonly marginMs: number;
  readonly renewIntervalMs: number;
  readonly keyPrefix: string;
  private readonly redis: Redis;
  private readonly ceilings: SeqCeilingStore;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly wallClock: () => number;
  private readonly held = new Map<number, MutableLease>();
  private readonly listeners = new Set<LeaseLostListener>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private lastRunId: string | undefined;

  constructor(options: RedisShardLeasesOptions) {
    if (options.ownerId.includes('|') || options.ownerId.length === 0) throw new RangeError(`bad owner id ${options.ownerId}`);
    this.redis = options.redis;
    this.ceilings = options.ceilings;
    this.ownerId = options.ownerId;
    this.ttlMs = options.ttlMs ?? 10_000;
    this.marginMs = options.marginMs ?? Math.max(Math.round(this.ttlMs / 10), 50);
    if (this.marginMs * 3 >= this.ttlMs) throw new RangeError(`lease margin ${this.marginMs} too large for ttl ${this.ttlMs}`);
    this.renewIntervalMs = Math.max(Math.floor(this.ttlMs / 3), 1);
    this.keyPrefix = options.keyPrefix ?? 'seqline:';
    this.logger = (options.logger ?? silentLogger).child({ component: 'shard-leases', ownerId: this.ownerId });
    this.now = options.now ?? (() => performance.now());
    this.wallClock = options.wallClock ?? Date.now;
  }

  keyOf(shard: number): string {
    return `${this.keyPrefix}lease:${shard}`;
  }

  /** The epoch scope of a shard in the ceiling store. */
  scopeOf(shard: number): string {
    return `shard-${shard}`;
  }

  /** Called (synchronously) whenever a held lease is lost; not for `release`. */
  onLost(listener: LeaseLostListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts renewing every ttl/3. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  /** Stops renewing (leases then self-fence after ttl − margin). Does not release. */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The current lease of a shard held here (possibly still waiting out or fenced). */
  current(shard: number): ShardLease | undefined {
    return this.held.get(shard);
  }

  heldShards(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /**
   * Takes the shard if nobody holds it; the new lease gets a fresh durable epoch and becomes
   * writable after ttl + margin, or sooner when the epoch record says nothing can conflict
   * (handoverWait). Undefined when another holder has it.
   */
  async acquire(shard: number): Promise<ShardLease | undefined> {
    if (this.held.has(shard)) throw new Error(`shard ${shard} is already held here; release it first`);
    const token = `${this.ownerId}|${randomUUID()}`;
    const startedAt = this.now();
    const reply = parseCasReply(await runScript(this.redis, ACQUIRE_LUA, [this.keyOf(shard)], [token, this.ttlMs]));
    this.noteRunId(reply.runId);
    if (!reply.ok) return undefined;
    const grantedAt = this.now();
    let drawn: DrawnEpoch;
    try {
      drawn = await this.ceilings.drawEpoch({ scope: this.scopeOf(shard) });
    } catch (err) {
      await this.releaseToken(shard, token).catch(() => {
        /* expires by itself */
      });
      throw err;
    }
    const waitOutMs = this.ttlMs + this.marginMs;
    const { waitMs, reason } = handoverWait({ drawn, waitOutMs, wallNowMs: this.wallClock() });
    const lease: MutableLease = {
      shard,
      token,
      epoch: drawn.epoch,
      runId: reply.runId,
      // The full wait-out counts from the acquire reply; a shorter one from now.
      writableAt: waitMs >= waitOutMs ? grantedAt + waitOutMs : this.now() + waitMs,
      handover: reason,
      renewStartedAt: startedAt,
      lostReason: undefined,
    };
    if (this.held.has(shard)) throw new Error(`shard ${shard} acquired twice concurrently`);
    this.held.set(shard, lease);
    this.logger.info({ shard, epoch: drawn.epoch, runId: reply.runId, waitMs, handover: reason }, 'shard lease acquired');
    return lease;
  }

  /** Why this lease may not be written with now, or undefined when it may. */
  writeBlocker(lease: ShardLease): string | undefined {
    const state = this.stateOf(lease);
    if (state === 'writable') return undefined;
    if (state === 'lost') return lease.lostReason ?? 'lease lost';
    if (state === 'waiting') return 'waiting out the previous owner';
    return 'self-fenced: lease not renewed in time';
  }

  stateOf(lease: ShardLease): LeaseState {
    if (lease.lostReason !== undefined || this.held.get(lease.shard) !== lease) return 'lost';
    const t = this.now();
    if (t - lease.renewStartedAt > this.ttlMs - this.marginMs) return 'fenced';
    if (t < lease.writableAt) return 'waiting';
    return 'writable';
  }

  /** Renews every held lease once. Transient Redis errors are logged; rule (b) covers them. */
  async renewAll(): Promise<void> {
    await Promise.all([...this.held.values()].map((lease) => this.renew(lease)));
  }

  /**
   * Gives the shard up: stops writing with it at once; records the release durably when the
   * caller vouches that its writers stopped and the lease was writable until now (see
   * ReleaseOptions); then deletes the key if it still holds this lease's token (also after a
   * loss: a restarted Redis may have restored our key). The record comes before the key goes, so
   * the next holder finds it. Resolves whether the release was recorded.
   */
  async release(lease: ShardLease, options: ReleaseOptions = {}): Promise<boolean> {
    const own = this.held.get(lease.shard);
    const wasWritable = own === lease && this.stateOf(lease) === 'writable';
    if (own === lease) {
      own.lostReason ??= 'released';
      this.held.delete(lease.shard);
    }
    let recorded = false;
    if (options.stopped === true && wasWritable) {
      try {
        recorded = await this.ceilings.recordRelease({ scope: this.scopeOf(lease.shard), epoch: lease.epoch, atMs: this.wallClock() });
      } catch (err) {
        this.logger.warn(
          { shard: lease.shard, epoch: lease.epoch, err: errMessage(err) },
          'could not record the release (the next holder waits out)',
        );
      }
    }
    await this.releaseToken(lease.shard, lease.token);
    this.logger.info({ shard: lease.shard, epoch: lease.epoch, recorded }, 'shard lease released');
    return recorded;
  }

  /** Shard → owner id holding its key now (null when free). */
  async holders(shards: number[]): Promise<Map<number, string | null>> {
    const out = new Map<number, string | null>();
    if (shards.length === 0) return out;
    const values = await this.redis.mget(shards.map((s) => this.keyOf(s)));
    shards.forEach((s, i) => {
      const v = values[i];
      out.set(s, v ? (v.split('|')[0] ?? v) : null);
    });
    return out;
  }

  private async renew(lease: MutableLease): Promise<void> {
    if (lease.lostReason !== undefined) return;
    const startedAt = this.now();
    let raw: unknown;
    try {
      raw = await withTimeout(runScript(this.redis, RENEW_LUA, [this.keyOf(lease.shard)], [lease.token, this.ttlMs]), this.renewIntervalMs);
    } catch (err) {
      this.logger.warn({ shard: lease.shard, err: errMessage(err) }, 'shard lease renewal failed');
      return;
    }
    const reply = parseCasReply(raw);
    this.noteRunId(reply.runId);
    if (lease.lostReason !== undefined) return;
    if (reply.runId !== lease.runId) return this.lose(lease, 'redis restarted or failed over (run_id changed)');
    if (!reply.ok) {
      return this.lose(lease, reply.holder === '' ? 'lease key vanished' : `lease taken by ${reply.holder.split('|')[0]}`);
    }
    if (startedAt > lease.renewStartedAt) lease.renewStartedAt = startedAt;
  }

  /** A reply from another Redis instance invalidates every lease granted by a previous one. */
  private noteRunId(runId: string): void {
    if (this.lastRunId !== undefined && this.lastRunId !== runId) {
      this.logger.warn({ previous: this.lastRunId, runId }, 'redis run_id changed: leases granted before are void');
    }
    this.lastRunId = runId;
    for (const lease of [...this.held.values()]) {
      if (lease.runId !== runId) this.lose(lease, 'redis restarted or failed over (run_id changed)');
    }
  }

  private lose(lease: MutableLease, reason: string): void {
    if (lease.lostReason !== undefined) return;
    lease.lostReason = reason;
    if (this.held.get(lease.shard) === lease) this.held.delete(lease.shard);
    this.logger.warn({ shard: lease.shard, epoch: lease.epoch, reason }, 'shard lease lost');
    for (const listener of [...this.listeners]) {
      try {
        listener(lease, reason);
      } catch (err) {
        this.logger.error({ err: errMessage(err) }, 'lease-lost listener threw');
      }
    }
  }

  private async releaseToken(shard: number, token: string): Promise<void> {
    await runScript(this.redis, RELEASE_LUA, [this.keyOf(shard)], [token]);
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      void this.renewAll().finally(() => this.schedule());
    }, this.renewIntervalMs);
    this.timer.unref();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
