/** What a CachedTimelineStore (timeline-cache.ts) is configured with and what it counts. */
import type { RedisCacheOptions } from './guard.ts';

/** What a CachedTimelineStore is configured with. */
export interface CachedTimelineOptions extends RedisCacheOptions {
  /** Most recent entries kept per inbox. Default 512. */
  maxEntries?: number;
  /** An inbox's cache expires this long after its last write. Default 1 h. */
  ttlMs?: number;
  /** Appinfos remembered per inbox for the dedup fast path. Default 1024. */
  dedupMaxPerInbox?: number;
  /** The dedup set of an inbox expires this long after its last append. Default 10 min. */
  dedupTtlMs?: number;
  /**
   * Answer headSeq from the cache when it has the inbox. Off by default: a cache write that
   * failed leaves the cached head behind the durable one, which is harmless in a sync answer
   * but not for an inbox writer, which would publish a push with a too-low prevSeq (a client
   * applying it would skip entries). Turn it on only for read-side instances (gateway sync).
   */
  headSeqFromCache?: boolean;
  /**
   * How long a cached "nothing newer" is trusted after the cache last met the durable head
   * (timeline-scripts.ts, F): the longest a reader can miss entries whose writer died before
   * its cache write. Default 1000 ms.
   */
  confirmMs?: number;
}

/** What a CachedTimelineStore counts. */
export interface TimelineCacheStats {
  /** readAfter answered from Redis. */
  readHits: number;
  /** readAfter answered by the durable store (no cache, range not covered, Redis failed, unconfirmed). */
  readMisses: number;
  /** Of those, answers the cache held but could not vouch were the newest (F: its confirmation lapsed). */
  readUnconfirmed: number;
  headHits: number;
  headMisses: number;
  /** Appinfos found in the dedup fast path / looked up in the durable index. */
  dedupHits: number;
  dedupMisses: number;
  /** Cache writes after a durable append that failed (the inbox's cache was then invalidated). */
  writeFailures: number;
}
