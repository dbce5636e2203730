/**
 * What every Redis-backed decorator shares: key naming, a hard timeout on each Redis call, a
 * rate-limited warning when Redis misbehaves, and invalidations that are retried until they land.
 * Redis is an optimisation here, so a failed call is an answer ("not available"), never a throw.
 */
import type { Redis } from 'ioredis';
import { silentLogger, systemClock, type Clock, type Logger } from '@seqline/core';

/** The Redis server's identity; a change means its data may have been lost or rolled back. */
export interface EpochSource {
  /** Server run_id, null while unknown (the caches stay off until it is known). */
  readonly runId: string | null;
}

export interface RedisCacheOptions {
  redis: Redis;
  /** Prefix of every key this library writes. Default `seqline:`. */
  keyPrefix?: string;
  /** A Redis call slower than this counts as failed (the caller falls back). Default 250 ms. */
  opTimeoutMs?: number;
  /**
   * When given, keys carry the server's run_id: after a restart or failover (new run_id) every
   * cached value written before is ignored, so a rolled-back copy is never read.
   */
  epoch?: EpochSource;
  logger?: Logger;
  /** At most one warning per this interval while Redis fails. Default 30 s. */
  warnEveryMs?: number;
  clock?: Clock;
}

export type Attempt<T> = { ok: true; value: T } | { ok: false };

const FAILED: Attempt<never> = { ok: false };
const RETRY_INVALIDATIONS_MS = 1_000;

/** Logs the first of a run of similar warnings, then at most one per interval with a count. */
export class ThrottledWarning {
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly everyMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  warn(obj: object, msg: string): void {
    const now = this.clock.now();
    if (now - this.lastAt < this.everyMs) {
      this.suppressed++;
      return;
    }
    this.logger.warn({ ...obj, suppressed: this.suppressed }, msg);
    this.lastAt = now;
    this.suppressed = 0;
  }
}

export class RedisGuard {
  readonly redis: Redis;
  readonly logger: Logger;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly epoch: EpochSource | undefined;
  private readonly warning: ThrottledWarning;
  /** Keys whose DEL failed: not read from by this process until the DEL lands. */
  private readonly pending = new Set<string>();
  private retryTimer: NodeJS.Timeout | undefined;
  private lastGeneration: string | null = null;

  /** `fallback` names what callers do instead, for the warnings ("bypassing cache", "failing open"). */
  constructor(
    options: RedisCacheOptions,
    component: string,
    private readonly fallback = 'bypassing cache',
  ) {
    this.redis = options.redis;
    this.logger = (options.logger ?? silentLogger).child({ component });
    this.prefix = options.keyPrefix ?? 'seqline:';
    this.timeoutMs = options.opTimeoutMs ?? 250;
    this.epoch = options.epoch;
    this.warning = new ThrottledWarning(this.logger, options.warnEveryMs ?? 30_000, options.clock);
  }

  /**
   * Key of one cached object, or null when caching is off (epoch not known yet). The id is in
   * a hash tag so all keys of one inbox/group land in one Redis Cluster slot.
   */
  key(kind: string, id: string): string | null {
    const generation = this.generation();
    return generation === null ? null : `${this.prefix}${kind}:${generation}:{${id}}`;
  }

  /** Runs one Redis call with the timeout; failures and timeouts are logged (throttled). */
  async attempt<T>(op: string, fn: () => Promise<T>): Promise<Attempt<T>> {
    // Not connected: answer at once instead of waiting in ioredis' offline queue.
    const status = this.redis.status;
    if (status !== 'ready' && status !== 'wait') {
      this.warning.warn({ op, status }, `redis not connected; ${this.fallback}`);
      return FAILED;
    }
    let timer: NodeJS.Timeout | undefined;
    const call = fn();
    // A timed-out call may still settle (or even apply) later; its result is ignored.
    call.catch(() => {});
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    try {
      const result = await Promise.race([call.then((value) => ({ value })), timeout]);
      if (result === 'timeout') {
        this.warning.warn({ op, timeoutMs: this.timeoutMs }, `redis call timed out; ${this.fallback}`);
        return FAILED;
      }
      return { ok: true, value: result.value };
    } catch (err) {
      this.warning.warn({ op, err }, `redis call failed; ${this.fallback}`);
      return FAILED;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Deletes a cached object; when that fails, stops trusting it here and retries the DEL. */
  async invalidate(key: string): Promise<void> {
    const done = await this.attempt('del', () => this.redis.del(key));
    if (done.ok) {
      this.pending.delete(key);
      return;
    }
    this.pending.add(key);
    this.retryTimer ??= setInterval(() => void this.retryInvalidations(), RETRY_INVALIDATIONS_MS).unref();
  }

  isPending(key: string): boolean {
    return this.pending.has(key);
  }

  /** Stops the retry timer; pending invalidations are dropped (TTLs bound their staleness). */
  close(): void {
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    this.pending.clear();
  }

  private generation(): string | null {
    if (this.epoch === undefined) return '0';
    const runId = this.epoch.runId;
    if (runId === null) return null;
    const generation = runId.slice(0, 16);
    if (generation !== this.lastGeneration) {
      // Keys of the old generation are never read again: nothing left to invalidate.
      if (this.lastGeneration !== null) this.pending.clear();
      this.lastGeneration = generation;
    }
    return generation;
  }

  private async retryInvalidations(): Promise<void> {
    for (const key of [...this.pending]) {
      const done = await this.attempt('del', () => this.redis.del(key));
      if (!done.ok) return; // still failing: try again on the next tick
      this.pending.delete(key);
    }
    if (this.pending.size === 0) {
      clearInterval(this.retryTimer);
      this.retryTimer = undefined;
    }
  }
}
