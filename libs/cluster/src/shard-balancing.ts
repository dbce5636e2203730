/**
 * The decisions of a ShardOwnerHost's balancing round that need none of its state
 * (shard-owner-host.ts): which shards it may own, and which free ones it takes now.
 */

/** The shards a host may own: all of them, or its desired ones (deduplicated, ascending). */
export function candidateShards(desired: 'all' | number[], shardCount: number): number[] {
  const candidates = desired === 'all' ? Array.from({ length: shardCount }, (_, i) => i) : [...new Set(desired)].sort((a, b) => a - b);
  for (const s of candidates) {
    if (!Number.isInteger(s) || s < 0 || s >= shardCount) throw new RangeError(`bad shard ${s}`);
  }
  return candidates;
}

/**
 * Of the open shards (neither held by the host nor being acquired), takes a wanted one as soon
 * as its lease is free and any other once it has been free for a full ttl; `freeSince` keeps,
 * across rounds, since when each open shard's lease has been seen free.
 */
export function takeFreeShards(
  open: readonly number[],
  holders: ReadonlyMap<number, string | null>,
  freeSince: Map<number, number>,
  round: { wanted: ReadonlySet<number>; now: number; ttl: number },
  take: (shard: number) => void,
): void {
  const { wanted, now, ttl } = round;
  for (const shard of open) {
    if (holders.get(shard) != null) {
      freeSince.delete(shard);
      continue;
    }
    const since = freeSince.get(shard) ?? now;
    freeSince.set(shard, since);
    if (wanted.has(shard) || now - since >= ttl) take(shard);
  }
}
