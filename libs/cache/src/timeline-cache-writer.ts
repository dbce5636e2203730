/**
 * The writes of a CachedTimelineStore (timeline-cache.ts): an append's entries and dedup keys,
 * the claims of store reads, head checks. A write that fails invalidates the inbox's cache.
 */
import { dedupKeyOf, type AppendOutcome, type Entry, type InboxKey, type TimelineStore } from '@seqline/core';
import type { RedisGuard } from './guard.ts';
import type { ScriptArg } from './lua.ts';
import type { CachedTimelineOptions, TimelineCacheStats } from './timeline-cache-options.ts';
import { APPEND_SCRIPT, HEAD_CHECK_SCRIPT, MERGE_SCRIPT, REMEMBER_APPINFOS_SCRIPT } from './timeline-scripts.ts';

/**
 * The dedup fast path's Redis key kind: a sorted set of core's dedup keys (dedupKeyOf) → seq.
 * Not `dd`, where the previous version kept plain appinfos: those members would read as keys.
 */
export const DEDUP_KIND = 'dk';

export class TimelineCacheWriter {
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly dedupMax: number;
  private readonly dedupTtlMs: number;
  private readonly confirmMs: number;

  constructor(
    private readonly guard: RedisGuard,
    private readonly inner: TimelineStore,
    private readonly counters: TimelineCacheStats,
    options: CachedTimelineOptions,
  ) {
    this.maxEntries = options.maxEntries ?? 512;
    this.ttlMs = options.ttlMs ?? 60 * 60_000;
    this.dedupMax = options.dedupMaxPerInbox ?? 1024;
    this.dedupTtlMs = options.dedupTtlMs ?? 10 * 60_000;
    this.confirmMs = options.confirmMs ?? 1000;
    if (!(this.confirmMs >= 1)) throw new RangeError('confirmMs must be >= 1');
    if (!(this.maxEntries >= 1) || !(this.dedupMax >= 1)) throw new RangeError('cache sizes must be >= 1');
  }

  /**
   * After the store said nothing lies above `head`: a cache that ends below it missed a write (a
   * crash between the durable append and the cache update, say) and is dropped; one that
   * reaches it is confirmed (F).
   */
  async checkHead(key: string, inbox: InboxKey, head: number, readAt: number): Promise<void> {
    const confirmKey = this.guard.key('tlc', inbox);
    if (confirmKey === null) return;
    const args = [Math.max(0, Math.floor(head)), this.confirmTtl(readAt)];
    await this.guard.attempt('timeline-head-check', () => HEAD_CHECK_SCRIPT.run(this.guard.redis, [key, confirmKey], args));
  }

  /**
   * After a durable append: adds its new entries to the cache and remembers their dedup keys
   * (duplicates too: their outcome carries the original seq, an equally durable fact), in one
   * Redis call. A lost dedup write only makes a later lookup ask the durable index.
   */
  async cacheAppended(inbox: InboxKey, entries: Entry[], outcomes: AppendOutcome[]): Promise<void> {
    const key = this.guard.key('tl', inbox);
    const dedupKey = this.guard.key(DEDUP_KIND, inbox);
    const confirmKey = this.guard.key('tlc', inbox);
    if (key === null || dedupKey === null || confirmKey === null || entries.length === 0) return;
    const remembered: ScriptArg[] = [];
    entries.forEach((entry, i) => {
      const outcome = outcomes[i];
      if (outcome !== undefined) remembered.push(outcome.seq, dedupKeyOf(entry));
    });
    const stored = entries.filter((entry, i) => outcomes[i]?.duplicate === false && outcomes[i]?.seq === entry.seq);
    const first = stored[0];
    const last = stored.at(-1);
    if (first === undefined || last === undefined) {
      const args = [this.dedupMax, this.dedupTtlMs, ...remembered];
      await this.guard.attempt('dedup-remember', () => REMEMBER_APPINFOS_SCRIPT.run(this.guard.redis, [dedupKey], args));
      return;
    }
    // These seqs were all above the head, so (first - 1, last] holds exactly these entries.
    const args = [
      remembered.length / 2,
      this.dedupMax,
      this.dedupTtlMs,
      ...remembered,
      ...this.mergeArgs(first.seq - 1, last.seq, stored, 'probe', this.confirmMs),
    ];
    const result = await this.guard.attempt('timeline-append', () =>
      APPEND_SCRIPT.run(this.guard.redis, [key, dedupKey, confirmKey], args),
    );
    if (!result.ok || typeof result.value !== 'string') return this.failWrite(key);
    if (result.value !== 'gap') return;
    // The cache ends below first - 1: seq gap or a missed write? The durable predecessor
    // (already written before this append, so stable) tells which.
    let predecessor: number;
    try {
      predecessor = (await this.inner.readBefore({ inbox, beforeSeq: first.seq, limit: 1 }))[0]?.seq ?? 0;
    } catch {
      await this.failWrite(key);
      return;
    }
    await this.merge(key, inbox, predecessor, last.seq, stored, 'force', undefined);
  }

  /** Merges a claim into the cache; on failure the inbox's cache is invalidated. */
  async merge(
    key: string,
    inbox: InboxKey,
    from: number,
    head: number,
    entries: Entry[],
    mode: 'probe' | 'force',
    readAt: number | undefined,
  ): Promise<string | undefined> {
    const confirmKey = this.guard.key('tlc', inbox);
    if (confirmKey === null) return undefined;
    const args = this.mergeArgs(from, head, entries, mode, this.confirmTtl(readAt));
    const result = await this.guard.attempt('timeline-merge', () => MERGE_SCRIPT.run(this.guard.redis, [key, confirmKey], args));
    if (result.ok && typeof result.value === 'string') return result.value;
    await this.failWrite(key);
    return undefined;
  }

  /** The claim "(from, head] is exactly `entries`", as MERGE_SCRIPT's arguments. */
  private mergeArgs(from: number, head: number, entries: Entry[], mode: 'probe' | 'force', confirmTtl: number): ScriptArg[] {
    // Only the newest maxEntries can survive the trim: send no more, and claim from the cut.
    let rows = entries;
    // Seqs are positive integers: (x, head] and (max(0, floor(x)), head] hold the same ones.
    let claimFrom = Math.max(0, Math.floor(from));
    if (rows.length > this.maxEntries) {
      claimFrom = (rows[rows.length - this.maxEntries - 1] as Entry).seq;
      rows = rows.slice(-this.maxEntries);
    }
    const args: ScriptArg[] = [claimFrom, head, mode, this.maxEntries, this.ttlMs, confirmTtl];
    for (const entry of rows) args.push(entry.seq, JSON.stringify(entry));
    return args;
  }

  /**
   * How long a claim from a store read begun at `readAt` confirms the cache (F): `confirmMs`
   * counted from the read, not from the cache write, so a write the read just missed stays
   * hidden no longer than that; 0 (no confirmation) once it is spent. An append's own claim
   * (`readAt` undefined) holds until the inbox's single writer writes again.
   */
  private confirmTtl(readAt: number | undefined): number {
    return readAt === undefined ? this.confirmMs : Math.max(0, Math.floor(this.confirmMs - (performance.now() - readAt)));
  }

  private async failWrite(key: string): Promise<void> {
    this.counters.writeFailures++;
    await this.guard.invalidate(key);
  }
}
