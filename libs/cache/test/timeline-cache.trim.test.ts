/**
 * A full inbox cache (and dedup set) is cut back by a sixteenth at once, not by one entry per
 * append: its size stays within [max − max/16, max], and every answer is still the store's.
 */
import { beforeAll, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import { msgEntry, msgKey, uniqueTenant } from '@seqline/testing';
import type { CachedTimelineStore } from '../src/index.ts';
import { describeWithRedis, probeRedis } from './harness.ts';
import { timelineCacheFixture } from './timeline-cache-fixture.ts';

const probe = await probeRedis();

describeWithRedis('CachedTimelineStore trimming (live Redis)', probe, () => {
  const fx = timelineCacheFixture('timeline-trim');
  let store: CachedTimelineStore;
  beforeAll(() => {
    store = fx.cached({ maxEntries: 64, dedupMaxPerInbox: 32 });
  });

  it('keeps between 60 and 64 entries and 30 to 32 appinfos once full, and answers like the store', async () => {
    const inbox = inboxKey(uniqueTenant(), 'alice');
    const tl = fx.tlKey(inbox);
    const dd = fx.ddKey(inbox);
    const sizes = new Set<number>();
    for (let seq = 1; seq <= 300; seq++) {
      await store.append({ inbox, entries: [msgEntry(seq, `m${seq}`)] });
      const entries = (await fx.redis.zcard(tl)) - 1; // minus the coverage marker
      expect(entries).toBeLessThanOrEqual(64);
      if (seq > 64) expect(entries).toBeGreaterThanOrEqual(60);
      sizes.add(entries);
      const appinfos = await fx.redis.zcard(dd);
      expect(appinfos).toBeLessThanOrEqual(32);
      if (seq > 32) expect(appinfos).toBeGreaterThanOrEqual(30);
    }
    // It was cut in steps, not one entry per append.
    expect([...sizes].filter((n) => n >= 60).sort((a, b) => a - b)).toEqual([60, 61, 62, 63, 64]);
    // The marker covers exactly what is left: the newest 60–64 come from Redis, older from the store.
    const held = (await fx.redis.zcard(tl)) - 1;
    const hits = store.stats().readHits;
    expect(await store.readAfter({ inbox, afterSeq: 300 - held, limit: 100 })).toEqual(
      await fx.inner.readAfter({ inbox, afterSeq: 300 - held, limit: 100 }),
    );
    expect(store.stats().readHits).toBe(hits + 1);
    expect(await store.readAfter({ inbox, afterSeq: 300 - held - 1, limit: 100 })).toEqual(
      await fx.inner.readAfter({ inbox, afterSeq: 300 - held - 1, limit: 100 }),
    );
    expect(store.stats().readHits).toBe(hits + 1);
    // A resend of an appinfo still in the dedup set is found there, an older one in the store.
    const found = await store.findSeqs({ inbox, keys: [msgKey('m300'), msgKey('m1')] });
    expect([...found.entries()].sort()).toEqual([
      [msgKey('m1'), 1],
      [msgKey('m300'), 300],
    ]);
  });
});
