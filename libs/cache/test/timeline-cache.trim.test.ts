/**
 * A full inbox cache (and dedup set) is cut back by a sixteenth at once, not by one entry per
 * append: its size stays within [max − max/16, max], and every answer is still the store's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { inboxKey, type TimelineStore } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { msgEntry, msgKey, uniqueTenant } from '@seqline/testing';
import { CachedTimelineStore } from '../src/index.ts';
import { connectRedis, deleteKeys, describeWithRedis, probeRedis, tempDir, uniquePrefix } from './harness.ts';

const probe = await probeRedis();

describeWithRedis('CachedTimelineStore trimming (live Redis)', probe, () => {
  const data = tempDir('timeline-trim');
  const keyPrefix = uniquePrefix();
  let engine: EmbeddedEngine;
  let redis: Redis;
  let inner: TimelineStore;
  let store: CachedTimelineStore;

  beforeAll(async () => {
    engine = await openEmbeddedEngine({ dir: data.dir });
    inner = engine.timeline;
    redis = await connectRedis();
    store = new CachedTimelineStore(inner, { redis, keyPrefix, maxEntries: 64, dedupMaxPerInbox: 32 });
  });
  afterAll(async () => {
    store.close();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
    await engine.close();
    data.remove();
  });

  it('keeps between 60 and 64 entries and 30 to 32 appinfos once full, and answers like the store', async () => {
    const inbox = inboxKey(uniqueTenant(), 'alice');
    const tl = `${keyPrefix}tl:0:{${inbox}}`;
    const dd = `${keyPrefix}dk:0:{${inbox}}`;
    const sizes = new Set<number>();
    for (let seq = 1; seq <= 300; seq++) {
      await store.append({ inbox, entries: [msgEntry(seq, `m${seq}`)] });
      const entries = (await redis.zcard(tl)) - 1; // minus the coverage marker
      expect(entries).toBeLessThanOrEqual(64);
      if (seq > 64) expect(entries).toBeGreaterThanOrEqual(60);
      sizes.add(entries);
      const appinfos = await redis.zcard(dd);
      expect(appinfos).toBeLessThanOrEqual(32);
      if (seq > 32) expect(appinfos).toBeGreaterThanOrEqual(30);
    }
    // It was cut in steps, not one entry per append.
    expect([...sizes].filter((n) => n >= 60).sort((a, b) => a - b)).toEqual([60, 61, 62, 63, 64]);
    // The marker covers exactly what is left: the newest 60–64 come from Redis, older from the store.
    const held = (await redis.zcard(tl)) - 1;
    const hits = store.stats().readHits;
    expect(await store.readAfter({ inbox, afterSeq: 300 - held, limit: 100 })).toEqual(
      await inner.readAfter({ inbox, afterSeq: 300 - held, limit: 100 }),
    );
    expect(store.stats().readHits).toBe(hits + 1);
    expect(await store.readAfter({ inbox, afterSeq: 300 - held - 1, limit: 100 })).toEqual(
      await inner.readAfter({ inbox, afterSeq: 300 - held - 1, limit: 100 }),
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
