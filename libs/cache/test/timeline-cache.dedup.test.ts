/** CachedTimelineStore's dedup set against the live Redis: resends answered from Redis, misses from the store. */
import { expect, it } from 'vitest';
import { dup, msgEntry, msgKey } from '@seqline/testing';
import { describeWithRedis, probeRedis } from './harness.ts';
import { batch, range, timelineCacheFixture } from './timeline-cache-fixture.ts';

const probe = await probeRedis();

describeWithRedis('CachedTimelineStore dedup (live Redis)', probe, () => {
  const fx = timelineCacheFixture('timeline-dedup');
  const { cached, fresh, keyPrefix } = fx;

  it('duplicates are not cached twice and resends are answered from the dedup set', async () => {
    const store = cached();
    const inbox = fresh();
    expect(await store.append({ inbox, entries: [msgEntry(1, 'a'), msgEntry(2, 'b'), msgEntry(3, 'a')] })).toEqual([
      { seq: 1, duplicate: false },
      { seq: 2, duplicate: false },
      dup(msgEntry(1, 'a')),
    ]);
    expect(await store.append({ inbox, entries: [msgEntry(4, 'b'), msgEntry(5, 'c')] })).toEqual([
      dup(msgEntry(2, 'b')),
      { seq: 5, duplicate: false },
    ]);
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 0, limit: 10 }));
    const before = store.stats();
    const found = await store.findSeqs({ inbox, keys: ['a', 'b', 'c', 'c'].map((a) => msgKey(a)) });
    expect([...found.entries()].sort()).toEqual([
      [msgKey('a'), 1],
      [msgKey('b'), 2],
      [msgKey('c'), 5],
    ]);
    expect(store.stats().dedupHits - before.dedupHits).toBe(3);
    expect(store.stats().dedupMisses).toBe(before.dedupMisses);
  });

  it("keys by sender: two senders' same appinfo are two members; the previous version's plain-appinfo set is never read", async () => {
    const store = cached();
    const inbox = fresh();
    // The previous version kept plain appinfos under `dd`; "carol/x" may have been one (anyone's).
    await fx.redis.zadd(`${keyPrefix}dd:0:{${inbox}}`, 7, msgKey('x', 'carol'));
    expect(await store.append({ inbox, entries: [msgEntry(1, 'x', { from: 'alice' }), msgEntry(2, 'x', { from: 'carol' })] })).toEqual([
      { seq: 1, duplicate: false },
      { seq: 2, duplicate: false },
    ]);
    const before = store.stats();
    const found = await store.findSeqs({ inbox, keys: [msgKey('x', 'alice'), msgKey('x', 'carol'), msgKey('x', 'dave')] });
    expect([...found.entries()].sort()).toEqual([
      [msgKey('x', 'alice'), 1],
      [msgKey('x', 'carol'), 2],
    ]);
    expect(store.stats().dedupHits - before.dedupHits).toBe(2);
  });

  it('"absent" in Redis falls back to the durable index', async () => {
    const store = cached({ dedupMaxPerInbox: 2 });
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 4), 'x') });
    await fx.inner.append({ inbox, entries: [msgEntry(5, 'bypass')] });
    const found = await store.findSeqs({ inbox, keys: ['x1', 'x4', 'bypass', 'never'].map((a) => msgKey(a)) });
    expect([...found.entries()].sort()).toEqual([
      [msgKey('bypass'), 5],
      [msgKey('x1'), 1],
      [msgKey('x4'), 4],
    ]);
    await fx.redis.del(fx.ddKey(inbox));
    expect((await store.findSeqs({ inbox, keys: [msgKey('x3')] })).get(msgKey('x3'))).toBe(3);
    // An append of duplicates only (nothing to cache) still remembers their original seqs.
    expect(await store.append({ inbox, entries: [msgEntry(9, 'x2')] })).toEqual([dup(msgEntry(2, 'x2'))]);
    const before = store.stats();
    expect((await store.findSeqs({ inbox, keys: [msgKey('x2')] })).get(msgKey('x2'))).toBe(2);
    expect(store.stats().dedupHits - before.dedupHits).toBe(1);
  });
});
