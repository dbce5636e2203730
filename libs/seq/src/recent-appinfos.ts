/**
 * dedup key (core's dedupKeyOf) → seq of entries this owner stored or saw stored recently, across its inboxes,
 * least recently stored out first. A client's resend usually follows its original within
 * seconds, so this answers it without allocating a seq or calling the store (with the seq
 * only: entries would make the bound a byte count; a caller that needs the original reads it);
 * an older resend goes to the store, which dedups it as well (it only burns a seq then, and
 * answers with the original). A hit is always true: committed entries are never removed before
 * their 180-day TTL.
 *
 * Two generations (see TwoGenerationMap) of per-inbox maps: every append looks up and
 * remembers here, keyed by inbox then dedup key (the key the append computes anyway) instead of
 * a joined string of both.
 *
 * The owners of one process share one (a worker runs an owner per leased shard): the bound is
 * the process's memory, not each owner's. Sharing is sound because every fact here stays true
 * whoever owns the inbox later.
 */
import type { DedupKey } from '@seqline/core';

const NONE: ReadonlyMap<DedupKey, number> = new Map();

export class RecentAppinfos {
  private current = new Map<string, Map<DedupKey, number>>();
  private previous = new Map<string, Map<DedupKey, number>>();
  /** keys remembered in the current generation, and in the previous one. */
  private count = 0;
  private previousCount = 0;
  private readonly generationSize: number;

  constructor(maxKeys: number) {
    this.generationSize = Math.floor(maxKeys / 2);
  }

  /** keys held (at most maxKeys; one remembered again in a newer generation counts twice). */
  get size(): number {
    return this.count + this.previousCount;
  }

  /** The known seqs of `keys` in `inbox` (usually none: no map is made then). */
  lookup(inbox: string, keys: Iterable<DedupKey>): ReadonlyMap<DedupKey, number> {
    let found: Map<DedupKey, number> | undefined;
    for (const key of keys) {
      const seq = this.lookupOne(inbox, key);
      if (seq !== undefined) (found ??= new Map()).set(key, seq);
    }
    return found ?? NONE;
  }

  /** The known seq of one key in `inbox`, if any (the usual single-entry append). */
  lookupOne(inbox: string, key: DedupKey): number | undefined {
    return this.current.get(inbox)?.get(key) ?? this.previous.get(inbox)?.get(key);
  }

  remember(inbox: string, key: DedupKey, seq: number): void {
    if (this.generationSize === 0) return;
    let seqs = this.current.get(inbox);
    if (seqs === undefined) this.current.set(inbox, (seqs = new Map<DedupKey, number>()));
    seqs.set(key, seq);
    if (++this.count >= this.generationSize) {
      this.previous = this.current;
      this.previousCount = this.count;
      this.current = new Map();
      this.count = 0;
    }
  }
}
