/**
 * TimelineStore decorator: the durable store stays the truth, Redis holds the most recent
 * entries of each inbox (to serve `sync` without the database) and recently stored dedup keys
 * (dedup fast path). Nothing is written to Redis before the durable append resolved, and a
 * cached answer is given only where the cache provably holds every entry of the range
 * (see timeline-scripts.ts for the invariant); otherwise the durable store answers.
 */
import {
  dedupKeyOf,
  hasLoneSurrogate,
  type AppendOutcome,
  type DedupKey,
  type DurableListener,
  type Entry,
  type InboxKey,
  type InboxEntryRef,
  type InboxPageAfter,
  type InboxPageBefore,
  type Logger,
  type StoredOutcome,
  type TimelineAppend,
  type TimelineStore,
  type EntryReaders,
} from '@seqline/core';
import { RedisGuard } from './guard.ts';
import type { CachedTimelineOptions, TimelineCacheStats } from './timeline-cache-options.ts';
import type { ScriptArg } from './lua.ts';
import { APPEND_SCRIPT, HEAD_CHECK_SCRIPT, META_SCRIPT, MERGE_SCRIPT, READ_SCRIPT, REMEMBER_APPINFOS_SCRIPT } from './timeline-scripts.ts';

type ReadAnswer = { kind: 'hit'; entries: Entry[] } | { kind: 'miss' | 'unconfirmed' };

/**
 * The dedup fast path's Redis key kind: a sorted set of core's dedup keys (dedupKeyOf) → seq.
 * Not `dd`, where the previous version kept plain appinfos: those members would read as keys.
 */
const DEDUP_KIND = 'dk';

export class CachedTimelineStore implements TimelineStore {
  private readonly guard: RedisGuard;
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly dedupMax: number;
  private readonly dedupTtlMs: number;
  private readonly headFromCache: boolean;
  private readonly confirmMs: number;
  /** Cache fills of read misses still in flight, by key. */
  private readonly fills = new Map<string, Promise<unknown>>();
  private readonly counters: TimelineCacheStats = {
    readHits: 0,
    readMisses: 0,
    readUnconfirmed: 0,
    headHits: 0,
    headMisses: 0,
    dedupHits: 0,
    dedupMisses: 0,
    writeFailures: 0,
  };

  constructor(
    private readonly inner: TimelineStore,
    options: CachedTimelineOptions,
  ) {
    this.guard = new RedisGuard(options, 'timeline-cache');
    this.maxEntries = options.maxEntries ?? 512;
    this.ttlMs = options.ttlMs ?? 60 * 60_000;
    this.dedupMax = options.dedupMaxPerInbox ?? 1024;
    this.dedupTtlMs = options.dedupTtlMs ?? 10 * 60_000;
    this.headFromCache = options.headSeqFromCache ?? false;
    this.confirmMs = options.confirmMs ?? 1000;
    if (!(this.confirmMs >= 1)) throw new RangeError('confirmMs must be >= 1');
    if (!(this.maxEntries >= 1) || !(this.dedupMax >= 1)) throw new RangeError('cache sizes must be >= 1');
  }

  /**
   * Every listener goes to the durable store: `durable` is told once, by that store as soon as
   * its entries are durable (a CQL store: before its conversation index write), else here once
   * it resolved — before the cache write either way; `indexed` only the store can tell. The
   * input goes on whole, so a field this cache does not know reaches the store too.
   */
  async append(input: TimelineAppend): Promise<StoredOutcome[]> {
    const { inbox, entries } = input;
    const durable = input.durable && once(input.durable, this.guard.logger);
    let outcomes: StoredOutcome[];
    try {
      outcomes = await this.inner.append(durable ? { ...input, durable } : input);
    } catch (err) {
      // The append may have landed anyway (a timeout): readers should go to the store.
      const key = this.guard.key('tl', inbox);
      if (key !== null) await this.guard.invalidate(key);
      throw err;
    }
    // Durable now: what waits only for that (a 1:1 follow-up) may start during the cache write.
    durable?.(outcomes);
    // Resolving only after the cache has the entries gives read-your-writes through the
    // cache, and the push (published after append resolves) never outruns it.
    await this.cacheAppended(inbox, entries, outcomes);
    return outcomes;
  }

  async readAfter(input: InboxPageAfter): Promise<Entry[]> {
    const { inbox, afterSeq, limit } = input;
    const key = this.guard.key('tl', inbox);
    if (limit > 0 && key !== null && !this.guard.isPending(key)) {
      const answer = await this.readCached(key, inbox, afterSeq, limit);
      if (answer.kind === 'hit') {
        this.counters.readHits++;
        return answer.entries;
      }
      if (answer.kind === 'unconfirmed') this.counters.readUnconfirmed++;
    }
    this.counters.readMisses++;
    const readAt = performance.now();
    const rows = await this.inner.readAfter(input);
    // A short answer is a timeless claim (nothing else lies in (afterSeq, last]) that also
    // reached the durable head, so it may fill the cache and confirm it (F). A full page may
    // not: the cache head would sit below the store's, and an answer from it would say "nothing
    // newer" too early. An empty one fills nothing; it confirms a cache that reaches afterSeq
    // (drops one below it). The answer does not wait for the fill: the claim is as true when it
    // lands late (a sync miss answered 200 entries about 1.5 ms sooner). One fill per inbox at
    // a time.
    const last = rows.at(-1);
    if (key !== null && limit > 0 && rows.length < limit && !this.guard.isPending(key) && !this.fills.has(key)) {
      const fill = (last ? this.merge(key, inbox, afterSeq, last.seq, rows, 'force', readAt) : this.checkHead(key, inbox, afterSeq, readAt))
        .catch(() => undefined)
        .finally(() => this.fills.delete(key));
      this.fills.set(key, fill);
    }
    return rows;
  }

  /**
   * Resolves once the cache fills started by earlier read misses have landed or failed. A read
   * right after a miss may miss again until then (e.g. when Redis has to load the script first).
   */
  async fillsSettled(): Promise<void> {
    await Promise.all(this.fills.values());
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    const key = this.guard.key('tl', inbox);
    const confirmKey = this.guard.key('tlc', inbox);
    if (this.headFromCache && key !== null && confirmKey !== null && !this.guard.isPending(key)) {
      const head = await this.cachedHead(key, confirmKey);
      if (head !== undefined) {
        this.counters.headHits++;
        return head;
      }
    }
    this.counters.headMisses++;
    const readAt = performance.now();
    const head = await this.inner.headSeq(inbox);
    // Writers ask for the head exactly when they take over an inbox: a cache their predecessor
    // left behind is dropped then.
    if (key !== null && !this.guard.isPending(key)) await this.checkHead(key, inbox, head, readAt);
    return head;
  }

  /**
   * "Present" in Redis is trusted: it was written after a durable append, and an inbox never
   * forgets a dedup key. "Absent" proves nothing (Redis may have lost it): ask the store.
   */
  async findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    const { inbox } = input;
    // Redis keeps members as UTF-8: an unpaired surrogate would read as U+FFFD and match another
    // key. No store accepts such a key, so there is nothing to find.
    const wanted = [...new Set(input.keys)].filter((k) => !hasLoneSurrogate(k));
    const key = this.guard.key(DEDUP_KIND, inbox);
    if (wanted.length === 0 || key === null) return this.inner.findSeqs({ inbox, keys: wanted });
    const cached = await this.guard.attempt('dedup-lookup', () => this.guard.redis.zmscore(key, ...wanted));
    if (!cached.ok) {
      this.counters.dedupMisses += wanted.length;
      return this.inner.findSeqs({ inbox, keys: wanted });
    }
    const found = new Map<DedupKey, number>();
    const missing: DedupKey[] = [];
    wanted.forEach((k, i) => {
      const seq = Number(cached.value[i] ?? NaN);
      if (Number.isSafeInteger(seq)) found.set(k, seq);
      else missing.push(k);
    });
    this.counters.dedupHits += found.size;
    this.counters.dedupMisses += missing.length;
    if (missing.length > 0) {
      for (const [k, seq] of await this.inner.findSeqs({ inbox, keys: missing })) found.set(k, seq);
    }
    return found;
  }

  getEntry(input: InboxEntryRef): Promise<Entry | null> {
    return this.inner.getEntry(input);
  }

  readBefore(input: InboxPageBefore): Promise<Entry[]> {
    return this.inner.readBefore(input);
  }

  addReaders(input: EntryReaders): Promise<string[]> {
    return this.inner.addReaders(input);
  }

  getReaders(input: InboxEntryRef): Promise<string[]> {
    return this.inner.getReaders(input);
  }

  stats(): TimelineCacheStats {
    return { ...this.counters };
  }

  /** Stops background retries. The Redis client belongs to the caller and stays open. */
  close(): void {
    this.guard.close();
  }

  // ------------------------------------------------------------------ internals

  /**
   * After the store said nothing lies above `head`: a cache that ends below it missed a write (a
   * crash between the durable append and the cache update, say) and is dropped; one that
   * reaches it is confirmed (F).
   */
  private async checkHead(key: string, inbox: InboxKey, head: number, readAt: number): Promise<void> {
    const confirmKey = this.guard.key('tlc', inbox);
    if (confirmKey === null) return;
    const args = [Math.max(0, Math.floor(head)), this.confirmTtl(readAt)];
    await this.guard.attempt('timeline-head-check', () => HEAD_CHECK_SCRIPT.run(this.guard.redis, [key, confirmKey], args));
  }

  /** The cached head, while confirmed (F). */
  private async cachedHead(key: string, confirmKey: string): Promise<number | undefined> {
    const meta = await this.guard.attempt('timeline-meta', () => META_SCRIPT.run(this.guard.redis, [key, confirmKey], []));
    const fresh = meta.ok && Array.isArray(meta.value) && meta.value.length === 3 && meta.value[2] === 1;
    const head = fresh ? Number((meta.value as unknown[])[1]) : NaN;
    return Number.isSafeInteger(head) ? head : undefined;
  }

  private async readCached(key: string, inbox: InboxKey, afterSeq: number, limit: number): Promise<ReadAnswer> {
    const confirmKey = this.guard.key('tlc', inbox);
    if (confirmKey === null) return { kind: 'miss' };
    const result = await this.guard.attempt('timeline-read', () =>
      READ_SCRIPT.run(this.guard.redis, [key, confirmKey], [Math.floor(afterSeq), limit]),
    );
    if (result.ok && Array.isArray(result.value) && result.value[0] === 'unconfirmed') return { kind: 'unconfirmed' };
    if (!result.ok || !Array.isArray(result.value) || result.value[0] !== 'hit') return { kind: 'miss' };
    const rows = result.value.slice(3) as unknown[];
    const entries: Entry[] = [];
    for (const row of rows) {
      if (typeof row !== 'string') return { kind: 'miss' };
      entries.push(JSON.parse(row) as Entry);
    }
    return { kind: 'hit', entries };
  }

  /**
   * After a durable append: adds its new entries to the cache and remembers their dedup keys
   * (duplicates too: their outcome carries the original seq, an equally durable fact), in one
   * Redis call. A lost dedup write only makes a later lookup ask the durable index.
   */
  private async cacheAppended(inbox: InboxKey, entries: Entry[], outcomes: AppendOutcome[]): Promise<void> {
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
  private async merge(
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

/** `durable`, told at most once; its failure is its own: the append it listens to is durable and goes on. */
function once(durable: DurableListener, logger: Logger): DurableListener {
  let told = false;
  return (outcomes) => {
    if (told) return;
    told = true;
    try {
      durable(outcomes);
    } catch (err) {
      logger.warn({ err }, 'durable listener threw');
    }
  };
}
