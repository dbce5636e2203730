/**
 * Token buckets in Redis, shared by every gateway process: the same shape as the gateway's
 * in-memory `RateLimiter` (`take(key)` → allowed?), async because the bucket lives in Redis.
 * One Lua call per take reads, refills and debits the bucket atomically.
 *
 * When Redis is unreachable, slow or erroring, take() ALLOWS (fails open) and logs at most
 * once per interval. A rate limit protects capacity against abuse; refusing every request
 * because the limiter's store is down would turn a Redis outage into a full outage of sends,
 * while the worst case of failing open is that limits are not enforced for a while (the
 * per-process in-flight caps and overload shedding still bound the work).
 */
import type { Redis } from 'ioredis';
import { silentLogger, type Clock, type Logger } from '@seqline/core';
import { RedisGuard } from './guard.ts';
import { LuaScript } from './lua.ts';

export interface RedisRateLimiterOptions {
  redis: Redis;
  /** Sustained rate: tokens added per second. */
  perSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet period. */
  burst: number;
  /** Names this limit, so several limits can share keys' ids (e.g. `send`, `login`). Default `default`. */
  name?: string;
  keyPrefix?: string;
  /** A Redis call slower than this fails open. Default 100 ms. */
  opTimeoutMs?: number;
  logger?: Logger;
  /** At most one "failing open" warning per this interval. Default 60 s. */
  warnEveryMs?: number;
  /**
   * Time source for refills. Default: the Redis server's clock (TIME), one clock for all
   * gateways so skewed hosts cannot mint tokens. Tests may inject a clock.
   */
  clock?: Clock;
}

export interface RedisRateLimiterStats {
  allowed: number;
  refused: number;
  /** Takes allowed only because Redis did not answer. */
  failedOpen: number;
}

/**
 * KEYS[1] bucket hash {t = tokens, u = updated ms}; ARGV: tokens per ms, burst, cost, now ms
 * ('' = Redis TIME). A bucket that would be full is the same as no bucket, so it expires once
 * it could have refilled completely.
 */
const TAKE_SCRIPT = new LuaScript(
  'rate-limit-take',
  `
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local b = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens, updated = tonumber(b[1]), tonumber(b[2])
if tokens == nil or updated == nil then tokens, updated = burst, now end
if now > updated then
  tokens = math.min(burst, tokens + (now - updated) * rate)
  updated = now
end
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'u', string.format('%.0f', updated))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return allowed
`,
);

export class RedisRateLimiter {
  private readonly guard: RedisGuard;
  private readonly prefix: string;
  private readonly perMs: number;
  private readonly counters: RedisRateLimiterStats = { allowed: 0, refused: 0, failedOpen: 0 };

  constructor(private readonly options: RedisRateLimiterOptions) {
    if (!(options.perSecond > 0) || !(options.burst >= 1)) {
      throw new RangeError('rate limit needs perSecond > 0 and burst >= 1');
    }
    this.perMs = options.perSecond / 1000;
    this.prefix = `${options.keyPrefix ?? 'seqline:'}rl:${options.name ?? 'default'}:`;
    this.guard = new RedisGuard(
      {
        redis: options.redis,
        opTimeoutMs: options.opTimeoutMs ?? 100,
        logger: (options.logger ?? silentLogger).child({ limit: options.name ?? 'default' }),
        warnEveryMs: options.warnEveryMs ?? 60_000,
        ...(options.clock ? { clock: options.clock } : {}),
      },
      'rate-limiter',
      'failing open (allowing)',
    );
  }

  /**
   * Takes `cost` tokens (default 1) from `key`'s bucket; false when there are not enough (the
   * bucket is then left as it was, minus nothing). A cost above `burst` is never allowed.
   */
  async take(key: string, cost = 1): Promise<boolean> {
    if (!(cost > 0) || !Number.isFinite(cost)) throw new RangeError(`rate limit cost must be a positive number, got ${cost}`);
    const now = this.options.clock ? this.options.clock.now() : '';
    const result = await this.guard.attempt('rate-limit-take', () =>
      TAKE_SCRIPT.run(this.guard.redis, [`${this.prefix}{${key}}`], [this.perMs, this.options.burst, cost, now]),
    );
    if (!result.ok) {
      this.counters.failedOpen++;
      return true;
    }
    const allowed = result.value === 1;
    if (allowed) this.counters.allowed++;
    else this.counters.refused++;
    return allowed;
  }

  /** The bucket size: a take of more is never allowed (LeasedRateLimiter caps costs at it). */
  get burst(): number {
    return this.options.burst;
  }

  stats(): RedisRateLimiterStats {
    return { ...this.counters };
  }
}
