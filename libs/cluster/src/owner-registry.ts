/**
 * Live shard-owner hosts, for balancing only (safety never depends on it: leases do that).
 * A sorted set `<prefix>owners` whose scores are expiry times on the Redis clock; each host
 * heartbeats every ttl/3 and is forgotten ttl after its last heartbeat.
 */
import type { Redis } from 'ioredis';
import { HEARTBEAT_LUA, runScript } from './redis-scripts.ts';

export class RedisOwnerRegistry {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly ttlMs: number,
  ) {
    this.key = `${keyPrefix}owners`;
  }

  /** Registers (or refreshes) `ownerId` and returns every live owner id, sorted. */
  async heartbeat(ownerId: string): Promise<string[]> {
    const raw = await runScript(this.redis, HEARTBEAT_LUA, [this.key], [ownerId, this.ttlMs]);
    if (!Array.isArray(raw)) throw new Error('unexpected owner registry reply');
    return raw.map(String).sort();
  }

  async leave(ownerId: string): Promise<void> {
    await this.redis.zrem(this.key, ownerId);
  }
}

/**
 * Rendezvous (highest-random-weight) hashing: each shard goes to the live owner with the
 * highest hash(owner, shard). When an owner joins or leaves only ~1/n of the shards move (with
 * `shard % n` nearly all would, and every move costs a lease wait-out). Every host computes
 * the same answer from the same owner list.
 */
export function preferredOwner(shard: number, owners: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const owner of owners) {
    const w = weight(owner, shard);
    if (w > bestWeight || (w === bestWeight && best !== undefined && owner < best)) {
      best = owner;
      bestWeight = w;
    }
  }
  return best;
}

/** FNV-1a of `owner#shard`, then a murmur3 finalizer for a good spread over small inputs. */
function weight(owner: string, shard: number): number {
  const s = `${owner}#${shard}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
