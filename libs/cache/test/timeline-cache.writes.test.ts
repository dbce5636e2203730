/** CachedTimelineStore's writes against the live Redis: failed writes, the durable listener, headSeq, one writer and many readers. */
import { expect, it } from 'vitest';
import type { InboxKey } from '@seqline/core';
import type { CachedTimelineStore } from '../src/index.ts';
import { connectRedis, describeWithRedis, probeRedis } from './harness.ts';
import { batch, range, timelineCacheFixture } from './timeline-cache-fixture.ts';

const probe = await probeRedis();

describeWithRedis('CachedTimelineStore writes (live Redis)', probe, () => {
  const fx = timelineCacheFixture('timeline-writes');
  const { cached, fresh, tlKey } = fx;

  it('a failed cache write invalidates the inbox instead of leaving a hole', async () => {
    const store = cached();
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 3)) });
    await fx.redis.set(tlKey(inbox), 'not a sorted set'); // every script on this key now errors
    await store.append({ inbox, entries: batch([4, 5]) });
    expect(store.stats().writeFailures).toBe(1);
    expect(await fx.redis.exists(tlKey(inbox))).toBe(0);
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toEqual(await fx.inner.readAfter({ inbox, afterSeq: 0, limit: 10 }));
    await store.append({ inbox, entries: batch([6]) });
    expect(await store.readAfter({ inbox, afterSeq: 5, limit: 10 })).toEqual(batch([6]));
  });

  it('tells a durable listener once, before its cache write; a throwing listener fails nothing', async () => {
    const store = cached();
    const inbox = fresh();
    const told: unknown[] = [];
    let sizeWhenTold: Promise<number> | undefined;
    const outcomes = await store.append({
      inbox,
      entries: batch([1, 2]),
      durable: (o) => {
        told.push(o);
        // Same connection as the store's: this read goes out before the cache write does.
        sizeWhenTold = fx.redis.zcard(tlKey(inbox));
      },
    });
    expect(told).toEqual([outcomes]);
    expect(await sizeWhenTold).toBe(0);
    expect(await fx.redis.zcard(tlKey(inbox))).toBeGreaterThan(0);
    const more = await store.append({
      inbox,
      entries: batch([3]),
      durable: () => {
        throw new Error('listener bug');
      },
    });
    expect(more).toEqual([{ seq: 3, duplicate: false }]);
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toEqual(batch([1, 2, 3]));
  });

  it('a failed durable append invalidates the cache and rethrows', async () => {
    const store = cached();
    const inbox = fresh();
    await store.append({ inbox, entries: batch(range(1, 3)) });
    await expect(store.append({ inbox, entries: batch([2], 'late') })).rejects.toThrow();
    expect(await fx.redis.exists(tlKey(inbox))).toBe(0);
    expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toEqual(batch(range(1, 3)));
  });

  it('headSeq comes from the cache only when asked to', async () => {
    const reader = cached({ headSeqFromCache: true });
    const writer = cached();
    const inbox = fresh();
    expect(await reader.headSeq(inbox)).toBe(0);
    await writer.append({ inbox, entries: batch([1, 2, 7]) });
    const hits = reader.stats().headHits;
    expect(await reader.headSeq(inbox)).toBe(7);
    expect(reader.stats().headHits).toBe(hits + 1);
    await fx.inner.append({ inbox, entries: batch([8]) });
    expect(await writer.headSeq(inbox)).toBe(8); // the writer's view must be exact
    expect(await reader.headSeq(inbox)).toBeLessThanOrEqual(8);
  });

  it('one writer process, several reader processes: readers hit and never skip', async () => {
    const readerClients = await Promise.all([connectRedis(), connectRedis()]);
    try {
      const writer = cached();
      const readers = readerClients.map((client) => cached({ headSeqFromCache: true }, client));
      const inboxes = Array.from({ length: 8 }, fresh);
      let writing = true;
      const writes = Promise.all(
        inboxes.map(async (inbox, i) => {
          let seq = 0;
          for (let n = 0; n < 40; n++) {
            const size = 1 + ((n + i) % 3);
            seq += 1 + ((n * 7 + i) % 3); // uneven gaps
            const entries = batch(range(seq, seq + size - 1), `w${n}-`);
            seq += size - 1;
            await writer.append({ inbox, entries });
          }
        }),
      ).finally(() => {
        writing = false;
      });
      // Each reader follows each inbox like a client: sync from its max seq, small pages.
      const follow = async (reader: CachedTimelineStore, inbox: InboxKey): Promise<number[]> => {
        const seen: number[] = [];
        let maxSeq = 0;
        for (;;) {
          const done = !writing;
          const page = await reader.readAfter({ inbox, afterSeq: maxSeq, limit: 4 });
          seen.push(...page.map((entry) => entry.seq));
          maxSeq = page.at(-1)?.seq ?? maxSeq;
          if (page.length === 0 && done) return seen;
          if (page.length === 0) await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const followed = await Promise.all(
        readers.flatMap((reader) => inboxes.map(async (inbox) => ({ inbox, seen: await follow(reader, inbox) }))),
      );
      await writes;
      for (const { inbox, seen } of followed) {
        expect(seen).toEqual((await fx.inner.readAfter({ inbox, afterSeq: 0, limit: 10_000 })).map((entry) => entry.seq));
      }
      for (const reader of readers) expect(reader.stats().readHits).toBeGreaterThan(reader.stats().readMisses);
    } finally {
      for (const client of readerClients) client.disconnect();
    }
  });
});
