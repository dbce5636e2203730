/** Redis hung, down, or coming back: the decorators keep answering from the stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { groupKey, inboxKey, type Entry, type GroupRecord } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { msgEntry, msgKey, uniqueTenant } from '@seqline/testing';
import { CachedGroupStore, CachedTimelineStore, createCacheRedisClient, RedisEpochWatcher } from '../src/index.ts';
import { ThrottledWarning } from '../src/guard.ts';
import {
  blackHole,
  connectRedis,
  describeWithRedis,
  freePort,
  hasRedisServerBinary,
  PrivateRedis,
  recordingLogger,
  tempDir,
  uniquePrefix,
  waitReady,
} from './harness.ts';

const batch = (seqs: number[]): Entry[] => seqs.map((seq) => msgEntry(seq, `m${seq}`));

describe('Redis hung or unreachable', () => {
  const data = tempDir('outage');
  let engine: EmbeddedEngine;
  beforeAll(async () => {
    engine = await openEmbeddedEngine({ dir: data.dir });
  });
  afterAll(async () => {
    await engine.close();
    data.remove();
  });

  it('a hung Redis costs at most the timeout per call, and answers come from the stores', async () => {
    const hole = await blackHole();
    const redis = new Redis(hole.url, { enableReadyCheck: false, disableClientInfo: true, maxRetriesPerRequest: 0 });
    redis.on('error', () => {});
    const timeline = new CachedTimelineStore(engine.timeline, { redis, opTimeoutMs: 40, headSeqFromCache: true });
    const groups = new CachedGroupStore(engine.groups, { redis, opTimeoutMs: 40 });
    try {
      await waitReady(redis);
      const tenant = uniqueTenant();
      const inbox = inboxKey(tenant, 'a');
      const started = Date.now();
      expect(await timeline.append({ inbox, entries: batch([1, 2, 3]) })).toHaveLength(3);
      expect(await timeline.readAfter({ inbox, afterSeq: 1, limit: 10 })).toEqual(batch([2, 3]));
      expect(await timeline.headSeq(inbox)).toBe(3);
      expect((await timeline.findSeqs({ inbox, keys: [msgKey('m2')] })).get(msgKey('m2'))).toBe(2);
      const group: GroupRecord = {
        key: groupKey(tenant, 'g'),
        tenant,
        id: 'g',
        name: 'g',
        admin: 'a',
        tier: 'small',
        memberCount: 1,
        createdAt: 1,
      };
      expect(await groups.createGroup({ group, members: ['a'], at: { time: 1, gseq: 0 } })).toBe(true);
      expect(await groups.listMembers(group.key)).toEqual(['a']);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(timeline.stats().readHits).toBe(0);
    } finally {
      timeline.close();
      groups.close();
      redis.disconnect();
      await hole.close();
    }
  });

  it('the epoch watcher knows no server while none answers', async () => {
    const redis = createCacheRedisClient({ url: `redis://127.0.0.1:${await freePort()}` });
    const watcher = new RedisEpochWatcher({ redis, intervalMs: 0 });
    try {
      expect(await watcher.start()).toBeNull();
      expect(watcher.runId).toBeNull();
    } finally {
      watcher.stop();
      redis.disconnect();
    }
  });

  it('throttled warnings: the first, then one per interval carrying the suppressed count', () => {
    const logger = recordingLogger();
    let now = 0;
    const warning = new ThrottledWarning(logger, 1_000, { now: () => now });
    for (let i = 0; i < 5; i++) warning.warn({ i }, 'down');
    now = 1_000;
    warning.warn({ i: 5 }, 'down');
    expect(logger.warnings).toEqual([
      { obj: { i: 0, suppressed: 0 }, msg: 'down' },
      { obj: { i: 5, suppressed: 4 }, msg: 'down' },
    ]);
  });
});

const binary = await hasRedisServerBinary();
describeWithRedis(
  'Redis down, then back (private redis-server)',
  binary ? { ok: true } : { ok: false, reason: 'redis-server binary not found' },
  () => {
    it('an invalidation that could not reach Redis is retried, and the key is not read meanwhile', async () => {
      const data = tempDir('outage-back');
      const engine = await openEmbeddedEngine({ dir: data.dir });
      const server = await PrivateRedis.start();
      const redis = await connectRedis(server.url);
      const keyPrefix = uniquePrefix();
      const store = new CachedTimelineStore(engine.timeline, { redis, keyPrefix });
      try {
        const inbox = inboxKey(uniqueTenant(), 'a');
        const key = `${keyPrefix}tl:0:{${inbox}}`;
        await store.append({ inbox, entries: batch([1, 2]) });
        await redis.save(); // the restart will bring this (soon stale) cache back
        await server.crash();
        // Redis is gone: the cache write fails, and so does the DEL that should follow it.
        await store.append({ inbox, entries: batch([3]) });
        expect(store.stats().writeFailures).toBe(1);
        await server.restart();
        await waitReady(redis);
        expect(await redis.exists(key)).toBe(1); // the restored copy, ending at 2
        // This process knows that copy is stale and does not read it.
        expect(await store.readAfter({ inbox, afterSeq: 2, limit: 10 })).toEqual(batch([3]));
        expect(store.stats().readHits).toBe(0);
        // The pending DEL lands within a retry period; then the cache is used again.
        await expect.poll(() => redis.exists(key), { timeout: 5_000 }).toBe(0);
        await store.append({ inbox, entries: batch([4]) });
        expect(await store.readAfter({ inbox, afterSeq: 3, limit: 10 })).toEqual(batch([4]));
        expect(store.stats().readHits).toBe(1);
      } finally {
        store.close();
        redis.disconnect();
        await server.stop();
        await engine.close();
        data.remove();
      }
    });
  },
);
