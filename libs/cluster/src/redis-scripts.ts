/**
 * Lua compare-and-set scripts for shard leases and the owner registry. Every lease script also
 * returns the server's `run_id`, read inside the same atomic step as the key: a lease is only
 * valid on the Redis instance that granted it, so a reply from a restarted or failed-over
 * server (whose data may have rolled back, e.g. from an AOF/RDB or a lagging replica) is
 * recognised even when ioredis transparently re-sent the command after a reconnect.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

const RUN_ID = `local runid = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') or ''`;

/** KEYS[1] lease key; ARGV token, ttl ms → {1, runid} | {0, runid, holder token}. */
export const ACQUIRE_LUA = `${RUN_ID}
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, runid} end
return {0, runid, redis.call('GET', KEYS[1]) or ''}`;

/** KEYS[1] lease key; ARGV token, ttl ms → {1, runid} | {0, runid, holder token or ''}. */
export const RENEW_LUA = `${RUN_ID}
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, runid}
end
return {0, runid, cur or ''}`;

/** KEYS[1] lease key; ARGV token → 1 when deleted, 0 when not ours. */
export const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * KEYS[1] owners zset; ARGV owner id ('' = only read), ttl ms → live owner ids. Scores are
 * expiry times on the Redis clock, so hosts with skewed clocks agree on who is alive.
 */
export const HEARTBEAT_LUA = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[1] ~= '' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) end
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

const shas = new Map<string, string>();
function sha1(script: string): string {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  return sha;
}

/** EVALSHA, falling back to EVAL when the server's script cache is empty (e.g. after a restart). */
export async function runScript(redis: Redis, script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(sha1(script), keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
      return redis.eval(script, keys.length, ...keys, ...args);
    }
    throw err;
  }
}

export interface CasReply {
  ok: boolean;
  runId: string;
  /** Token currently in the key when not ok ('' = missing). */
  holder: string;
}

export function parseCasReply(raw: unknown): CasReply {
  if (!Array.isArray(raw) || (raw[0] !== 0 && raw[0] !== 1)) throw new Error(`unexpected lease script reply ${JSON.stringify(raw)}`);
  return { ok: raw[0] === 1, runId: String(raw[1] ?? ''), holder: String(raw[2] ?? '') };
}
