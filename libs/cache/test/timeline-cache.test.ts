/** CachedTimelineStore against the live Redis: coverage rules and staleness (writes: timeline-cache.writes.test.ts; dedup: timeline-cache.dedup.test.ts). */
import { expect, it } from 'vitest';
import type { Entry, InboxKey, TimelineStore } from '@seqline/core';
import { describeWithRedis, probeRedis } from './harness.ts';
import { batch, range, timelineCacheFixture } from './timeline-cache-fixture.ts';

const probe = await probeRedis();

describeWithRedis('CachedTimelineStore (live Redis)', probe, () => {
  const fx = timelineCacheFixture('timeline');
  const { cached, fresh, tlKey } = fx;

  /** A cached answer may be stale (shorter) but never skip: it is a prefix of the store's. */
  async function expectPrefixOfTruth(store: TimelineStore, inbox: InboxKey, after: number, limit: number): Promise<Entry[]> {
    const got = await store.readAfter({ inbox, afterSeq: after, limit });
    const truth = await fx.inner.readAfter({ inbox, afterSeq: after, limit });
    expect(got).toEqual(truth.slice(0, got.length));
    return got;
  }

  it('serves covered ranges from Redis with the same answer as the store', async () => {
    const store = cached();
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 5)) });
    await store.append({ inbox, entries: batch([6, 9, 10]) });
    const before = store.stats();
    for (const after of [0, 1, 3, 5, 6, 8, 9, 10]) {
      for (const limit of [1, 2, 4, 100]) {
        expect(await store.readAfter({ inbox, afterSeq: after, limit })).toEqual(
          await fx.inner.readAfter({ inbox, afterSeq: after, limit }),
        );
      }
    }
    const after = store.stats();
    expect(after.readHits - before.readHits).toBe(32);
    expect(after.readMisses).toBe(before.readMisses);
  });

  it('a miss (expired key) answers from the store; a last page fills the cache, a full page does not', async () => {
    const store = cached();
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 20)) });
    await fx.redis.del(tlKey(inbox));
    // As after a Redis restart: the fill's script goes NOSCRIPT → EVAL, after the next read's call.
    await fx.redis.script('FLUSH');
    const stats = store.stats();
    // A full page ends below the head: caching it would later answer "nothing newer" early.
    expect(await store.readAfter({ inbox, afterSeq: 4, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 4, limit: 10 }));
    expect(await fx.redis.exists(tlKey(inbox))).toBe(0);
    expect(await store.readAfter({ inbox, afterSeq: 4, limit: 100 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 4, limit: 100 })); // reaches the head
    await store.fillsSettled(); // the answer did not wait for its cache fill
    expect(store.stats().readMisses).toBe(stats.readMisses + 2);
    for (const [after, limit] of [
      [4, 10],
      [8, 3],
      [14, 100],
      [20, 5],
    ] as const) {
      expect(await store.readAfter({ inbox, afterSeq: after, limit })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: after, limit }));
    }
    expect(store.stats().readHits).toBe(stats.readHits + 4);
    expect(await store.readAfter({ inbox, afterSeq: 2, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 2, limit: 10 })); // below: store
    expect(store.stats().readMisses).toBe(stats.readMisses + 3);
    await store.append({ inbox, entries: batch([21]) });
    expect(await store.readAfter({ inbox, afterSeq: 14, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 14, limit: 10 }));
    expect(store.stats().readHits).toBe(stats.readHits + 5);
  });

  it('a writer asking the durable head drops a cache that missed a write (crash before the cache update)', async () => {
    const writer = cached();
    const inbox = fresh();
    await writer.append({ inbox, entries: batch(range(1, 4)) });
    await fx.inner.append({ inbox, entries: batch([5]) }); // durable; the process died before caching it
    expect(await writer.readAfter({ inbox, afterSeq: 4, limit: 10 })).toEqual([]); // stale, not wrong: no hole
    // The next owner of the inbox starts by reading the durable head.
    expect(await writer.headSeq(inbox)).toBe(5);
    expect(await fx.redis.exists(tlKey(inbox))).toBe(0);
    expect(await writer.readAfter({ inbox, afterSeq: 4, limit: 10 })).toEqual(batch([5]));
    // An up-to-date cache is left alone.
    await writer.append({ inbox, entries: batch([6]) });
    expect(await writer.headSeq(inbox)).toBe(6);
    expect(await fx.redis.exists(tlKey(inbox))).toBe(1);
  });

  it('a cache its writer left behind answers "nothing newer" for at most confirmMs, then the store answers', async () => {
    const confirmMs = 150;
    const writer = cached({ confirmMs });
    const reader = cached({ confirmMs, headSeqFromCache: true });
    const inbox = fresh();
    await writer.append({ inbox, entries: batch(range(1, 4)) });
    const confirmedAt = Date.now();
    await fx.inner.append({ inbox, entries: batch([5]) }); // durable; the writer died before caching it
    // Within confirmMs of the last claim that met the durable head, stale (short), never wrong.
    const early = await reader.readAfter({ inbox, afterSeq: 4, limit: 10 });
    if (Date.now() - confirmedAt < confirmMs) expect(early).toEqual([]);
    await new Promise((r) => setTimeout(r, confirmMs + 20 - (Date.now() - confirmedAt)));
    // The bound is the contract: past it the cache cannot vouch for its head and the store answers.
    const unconfirmed = reader.stats().readUnconfirmed;
    expect(await reader.readAfter({ inbox, afterSeq: 4, limit: 10 })).toEqual(batch([5]));
    expect(reader.stats().readUnconfirmed).toBe(unconfirmed + 1);
    await reader.fillsSettled();
    // That answer filled and confirmed the cache: the next read is a hit, and the head is the store's.
    const hits = reader.stats().readHits;
    expect(await reader.readAfter({ inbox, afterSeq: 3, limit: 10 })).toEqual(batch([4, 5]));
    expect(reader.stats().readHits).toBe(hits + 1);
    expect(await reader.headSeq(inbox)).toBe(5);
  });

  it('a full page from the cache needs no confirmation; an empty store answer confirms a cache that reaches it', async () => {
    const confirmMs = 100;
    const store = cached({ confirmMs });
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 6)) });
    await new Promise((r) => setTimeout(r, confirmMs + 20));
    const before = store.stats();
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 3 })).toEqual(batch([1, 2, 3])); // says nothing past 3
    expect(store.stats().readHits).toBe(before.readHits + 1);
    expect(await store.readAfter({ inbox, afterSeq: 6, limit: 10 })).toEqual([]); // unconfirmed: the store says so
    await store.fillsSettled();
    expect(store.stats().readUnconfirmed).toBe(before.readUnconfirmed + 1);
    expect(await store.readAfter({ inbox, afterSeq: 6, limit: 10 })).toEqual([]); // confirmed by that answer
    expect(store.stats().readHits).toBe(before.readHits + 2);
  });

  it('keeps only the newest maxEntries and never answers below them', async () => {
    const store = cached({ maxEntries: 8 });
    const inbox = fresh();
    for (let seq = 1; seq <= 30; seq += 3) await store.append({ inbox, entries: batch([seq, seq + 1, seq + 2]) });
    expect(await fx.redis.zcard(tlKey(inbox))).toBe(9); // 8 entries + the coverage marker
    const hits = store.stats().readHits;
    expect(await store.readAfter({ inbox, afterSeq: 22, limit: 100 })).toEqual(
      await fx.inner.readAfter({ inbox, afterSeq: 22, limit: 100 }),
    );
    expect(store.stats().readHits).toBe(hits + 1);
    expect(await store.readAfter({ inbox, afterSeq: 21, limit: 100 })).toEqual(
      await fx.inner.readAfter({ inbox, afterSeq: 21, limit: 100 }),
    );
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 100 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 0, limit: 100 }));
    expect(store.stats().readHits).toBe(hits + 1);
    expect(await fx.redis.pttl(tlKey(inbox))).toBeGreaterThan(0);
  });

  it('one append larger than the cache keeps its newest entries', async () => {
    const store = cached({ maxEntries: 5 });
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 12)) });
    expect(await fx.redis.zcard(tlKey(inbox))).toBe(6);
    expect(await store.readAfter({ inbox, afterSeq: 7, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 7, limit: 10 }));
    expect(await store.readAfter({ inbox, afterSeq: 3, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 3, limit: 10 }));
  });

  it('a seq gap is bridged with the durable predecessor, a missed write is not', async () => {
    const store = cached();
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 3)) });
    await store.append({ inbox, entries: batch([10_004]) }); // takeover jump: nothing lies in (3, 10004)
    const hits = store.stats().readHits;
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 0, limit: 10 }));
    expect(store.stats().readHits).toBe(hits + 1);

    // Appends that reached the store but not the cache (a lost cache write):
    await fx.inner.append({ inbox, entries: batch([10_005, 10_006]) });
    await store.append({ inbox, entries: batch([10_007]) });
    for (const after of [0, 3, 10_004, 10_005, 10_006]) {
      expect(await store.readAfter({ inbox, afterSeq: after, limit: 10 })).toEqual(
        await fx.inner.readAfter({ inbox, afterSeq: after, limit: 10 }),
      );
    }
  });

  it('a stale cache may answer short, never with a hole, and a reader ahead of it goes to the store', async () => {
    const store = cached();
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 5)) });
    await fx.inner.append({ inbox, entries: batch([6, 7]) }); // the cache missed these
    expect(await expectPrefixOfTruth(store, inbox, 3, 10)).toHaveLength(2); // stale: 4, 5
    const misses = store.stats().readMisses;
    // The reader has seen 6: the cache (head 5) is provably behind and is not asked.
    expect(await store.readAfter({ inbox, afterSeq: 6, limit: 10 })).toEqual(batch([7]));
    expect(store.stats().readMisses).toBe(misses + 1);
    for (const after of range(0, 7)) await expectPrefixOfTruth(store, inbox, after, 10);
  });
});
