/**
 * Tells a restarted or failed-over Redis apart from the one we were talking to: each server
 * process has a random `run_id` (INFO server), new on every start and different on a promoted
 * replica. Such a server may hold nothing (no persistence), an older copy (AOF everysec, async
 * replication) or a copy that is fine — we cannot tell which, so anything counted or cached
 * there before is not trusted again: the caches put the run_id into their key names, and
 * listeners of onChange can drop in-process assumptions (leases, counters).
 *
 * While the connection is down the run_id is unknown (null) and the caches stay off; they come
 * back only after the server on the new connection has been identified. Polling (default
 * every 1 s) also catches a backend restart behind a proxy, where our TCP connection survives.
 * Give the watcher the same client the caches use.
 */
import type { Redis } from 'ioredis';
import { silentLogger, type Logger } from '@seqline/core';
import { ThrottledWarning, type EpochSource } from './guard.ts';

export interface EpochChange {
  previous: string;
  current: string;
}

export interface RedisEpochWatcherOptions {
  redis: Redis;
  /** Polling period; 0 disables polling (checks then only happen on reconnect or check()). Default 1000 ms. */
  intervalMs?: number;
  /** An INFO call slower than this counts as failed. Default 1000 ms. */
  opTimeoutMs?: number;
  logger?: Logger;
}

export class RedisEpochWatcher implements EpochSource {
  private current: string | null = null;
  /** Last identified server, kept across disconnects to notice a change. */
  private lastKnown: string | null = null;
  private readonly listeners = new Set<(change: EpochChange) => void>();
  private readonly logger: Logger;
  private readonly warning: ThrottledWarning;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight: Promise<string | null> | undefined;
  /** Bumped on every disconnect: an INFO answer from an older connection is not trusted. */
  private connection = 0;
  private readonly onReady = (): void => {
    this.inFlight = undefined;
    void this.check();
  };
  private readonly onDisconnect = (): void => {
    this.connection++;
    this.current = null;
  };

  constructor(private readonly options: RedisEpochWatcherOptions) {
    this.logger = (options.logger ?? silentLogger).child({ component: 'redis-epoch' });
    this.warning = new ThrottledWarning(this.logger, 30_000);
  }

  get runId(): string | null {
    return this.current;
  }

  /** Identifies the server now; resolves to its run_id, or null when it cannot be reached. */
  check(): Promise<string | null> {
    // Concurrent callers share one INFO round trip.
    if (this.inFlight) return this.inFlight;
    const call = this.identify().finally(() => {
      if (this.inFlight === call) this.inFlight = undefined;
    });
    this.inFlight = call;
    return call;
  }

  /** Calls `listener` whenever a different server is identified; returns an unsubscribe. */
  onChange(listener: (change: EpochChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Identifies the server, then follows reconnects and polls. */
  async start(): Promise<string | null> {
    if (!this.running) {
      this.running = true;
      this.options.redis.on('ready', this.onReady);
      this.options.redis.on('close', this.onDisconnect);
      this.options.redis.on('reconnecting', this.onDisconnect);
      const every = this.options.intervalMs ?? 1_000;
      if (every > 0) this.timer = setInterval(() => void this.check(), every).unref();
    }
    return this.check();
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.timer);
    this.options.redis.off('ready', this.onReady);
    this.options.redis.off('close', this.onDisconnect);
    this.options.redis.off('reconnecting', this.onDisconnect);
  }

  private async identify(): Promise<string | null> {
    const redis = this.options.redis;
    const connection = this.connection;
    if (redis.status !== 'ready') {
      this.current = null;
      return null;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const info = await Promise.race([
        redis.info('server'),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('INFO timed out')), this.options.opTimeoutMs ?? 1_000);
        }),
      ]);
      const runId = /^run_id:([0-9a-f]+)\s*$/m.exec(info)?.[1];
      if (runId === undefined) throw new Error('INFO server has no run_id');
      if (connection !== this.connection) return null; // reconnected meanwhile: onReady asks again
      this.identified(runId);
      return runId;
    } catch (err) {
      if (connection === this.connection) this.current = null;
      this.warning.warn({ err }, 'cannot identify the redis server; caches off until it answers');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  private identified(runId: string): void {
    const previous = this.lastKnown;
    this.current = runId;
    this.lastKnown = runId;
    if (previous === null || previous === runId) return;
    this.logger.warn({ previous, current: runId }, 'redis server changed (restart or failover): cached state dropped');
    for (const listener of this.listeners) {
      try {
        listener({ previous, current: runId });
      } catch (err) {
        this.logger.error({ err }, 'epoch change listener threw');
      }
    }
  }
}
