/**
 * The hold (core's HoldStore) in Redis, shared by every gateway: one key per held user, timed by
 * Redis itself (PX), so no gateway's clock is compared with another's.
 *
 * When Redis is unreachable, slow or erroring it FAILS OPEN, as RedisRateLimiter does: a hold
 * that cannot be recorded is held only by the gateway that set it, and a gateway that cannot ask
 * sees no hold. A hold is a deterrent against reconnect loops, not a security boundary; refusing
 * every new socket because Redis is down would turn a Redis outage into a full outage. The
 * refusal rule still closes an abuser's sockets wherever they are.
 */
import type { Redis } from 'ioredis';
import { silentLogger, type HoldStore, type Logger } from '@seqline/core';
import { RedisGuard } from './guard.ts';
import { LuaScript } from './lua.ts';

export interface RedisHoldStoreOptions {
  redis: Redis;
  keyPrefix?: string;
  /** A Redis call slower than this fails open. Default 100 ms (the rate limiter's). */
  opTimeoutMs?: number;
  logger?: Logger;
  /** At most one "failing open" warning per this interval. Default 60 s. */
  warnEveryMs?: number;
}

/** KEYS[1] the hold; ARGV[1] its length in ms. A longer hold already set stays. */
const HOLD_SCRIPT = new LuaScript(
  'hold',
  `
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then redis.call('SET', KEYS[1], '1', 'PX', ms) end
return 1
`,
);

export class RedisHoldStore implements HoldStore {
  private readonly guard: RedisGuard;
  private readonly prefix: string;

  constructor(options: RedisHoldStoreOptions) {
    this.prefix = `${options.keyPrefix ?? 'seqline:'}hold:`;
    this.guard = new RedisGuard(
      {
        redis: options.redis,
        opTimeoutMs: options.opTimeoutMs ?? 100,
        logger: options.logger ?? silentLogger,
        warnEveryMs: options.warnEveryMs ?? 60_000,
      },
      'hold-store',
      'failing open (holds stay on the gateway that set them)',
    );
  }

  async hold(input: { key: string; ms: number }): Promise<void> {
    if (!(input.ms > 0) || !Number.isFinite(input.ms)) return;
    const ms = Math.ceil(input.ms);
    await this.guard.attempt('hold', () => HOLD_SCRIPT.run(this.guard.redis, [this.keyOf(input.key)], [ms]));
  }

  async remainingMs(input: { key: string }): Promise<number> {
    const left = await this.guard.attempt('hold-pttl', () => this.guard.redis.pttl(this.keyOf(input.key)));
    // -2: no such key; -1: a key without expiry, which this store never writes (not a hold).
    return left.ok && left.value > 0 ? left.value : 0;
  }

  /** The user id in a hash tag: a user's hold and rate bucket share a Redis Cluster slot. */
  private keyOf(key: string): string {
    return `${this.prefix}{${key}}`;
  }
}
