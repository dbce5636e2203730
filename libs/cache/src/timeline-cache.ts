/**
 * TimelineStore decorator: the durable store stays the truth, Redis holds the most recent
 * entries of each inbox (to serve `sync` without the database) and recently stored dedup keys
 * (dedup fast path). Nothing is written to Redis before the durable append resolved, and a
 * cached answer is given only where the cache provably holds every entry of the range
 * (see timeline-scripts.ts for the invariant); otherwise the durable store answers.
 */
import {
  hasLoneSurrogate,
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
import { DEDUP_KIND, TimelineCacheWriter } from './timeline-cache-writer.ts';
import { META_SCRIPT, READ_SCRIPT } from './timeline-scripts.ts';

type ReadAnswer = { kind: 'hit'; entries: Entry[] } | { kind: 'miss' | 'unconfirmed' };

export class CachedTimelineStore implements TimelineStore {
  private readonly guard: RedisGuard;
  private readonly headFromCache: boolean;
  /** The cache writes: entries after appends, claims of store reads, head checks. */
  private readonly writer: TimelineCacheWriter;
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
    this.headFromCache = options.headSeqFromCache ?? false;
    this.writer = new TimelineCacheWriter(this.guard, inner, this.counters, options);
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
    await this.writer.cacheAppended(inbox, entries, outcomes);
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
      const fill = (
        last
          ? this.writer.merge(key, inbox, afterSeq, last.seq, rows, 'force', readAt)
          : this.writer.checkHead(key, inbox, afterSeq, readAt)
      )
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
    if (key !== null && !this.guard.isPending(key)) await this.writer.checkHead(key, inbox, head, readAt);
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
