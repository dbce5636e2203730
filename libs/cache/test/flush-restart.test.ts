/**
 * Redis losing data under the caches, on a private redis-server (FLUSHALL and kill -9 must not
 * touch the shared one): random appends, reads, flushes and lost cache writes never make a
 * reader skip an entry; a restart that brings back an older copy is detected by run_id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { groupKey, inboxKey, type Entry, type GroupRecord, type InboxKey } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { msgEntry, uniqueTenant } from '@seqline/testing';
import { CachedGroupStore, CachedTimelineStore, RedisEpochWatcher, type EpochChange } from '../src/index.ts';
import { connectRedis, describeWithRedis, hasRedisServerBinary, PrivateRedis, tempDir, uniquePrefix, waitReady } from './harness.ts';

const binary = await hasRedisServerBinary();
const probe = binary ? { ok: true as const } : { ok: false as const, reason: 'redis-server binary not found' };

type Op =
  | { op: 'append'; gap: number; size: number; dupOf: number | null }
  | { op: 'lostAppend'; gap: number }
  | { op: 'read'; pick: number; limit: number }
  | { op: 'sync' }
  | { op: 'flush' }
  | { op: 'expire' };

describeWithRedis('caches when Redis loses data (private redis-server)', probe, () => {
  const data = tempDir('flush');
  let server: PrivateRedis;
  let redis: Redis;
  let engine: EmbeddedEngine;

  beforeAll(async () => {
    server = await PrivateRedis.start();
    redis = await connectRedis(server.url);
    engine = await openEmbeddedEngine({ dir: data.dir });
  });
  afterAll(async () => {
    redis?.disconnect();
    await engine?.close();
    await server?.stop();
    data.remove();
  });

  const opArb = (lossy: boolean): fc.Arbitrary<Op> =>
    fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          op: fc.constant('append' as const),
          gap: fc.integer({ min: 1, max: 3 }),
          size: fc.integer({ min: 1, max: 4 }),
          dupOf: fc.option(fc.nat(40)),
        }),
      },
      { weight: lossy ? 1 : 0, arbitrary: fc.record({ op: fc.constant('lostAppend' as const), gap: fc.integer({ min: 1, max: 3 }) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant('read' as const), pick: fc.nat(60), limit: fc.integer({ min: 1, max: 8 }) }) },
      { weight: 3, arbitrary: fc.constant({ op: 'sync' as const }) },
      { weight: 1, arbitrary: fc.constant({ op: 'flush' as const }) },
      { weight: 1, arbitrary: fc.constant({ op: 'expire' as const }) },
    );

  /**
   * Plays the ops against the cache; checks every readAfter against the store. `exact`: all
   * cache writes succeeded, so every answer (hit or miss) must equal the store's; otherwise
   * an answer may be shorter (stale) but must be a prefix — a hole would be a skip.
   */
  async function play(ops: Op[], exact: boolean): Promise<{ hits: number }> {
    const keyPrefix = uniquePrefix();
    const store = new CachedTimelineStore(engine.timeline, { redis, keyPrefix, maxEntries: 6 });
    const inbox: InboxKey = inboxKey(uniqueTenant(), 'alice');
    const appinfos: string[] = [];
    let head = 0;
    const client = { maxSeq: 0, seen: [] as number[] };
    const check = async (after: number, limit: number): Promise<Entry[]> => {
      const got = await store.readAfter({ inbox, afterSeq: after, limit });
      const truth = await engine.timeline.readAfter({ inbox, afterSeq: after, limit });
      if (exact) expect(got).toEqual(truth);
      else expect(got).toEqual(truth.slice(0, got.length));
      return got;
    };
    try {
      for (const step of ops) {
        switch (step.op) {
          case 'append': {
            const entries = Array.from({ length: step.size }, (_, i) => {
              const reuse = i === 0 && step.dupOf !== null ? appinfos[step.dupOf % Math.max(1, appinfos.length)] : undefined;
              const appinfo = reuse ?? `a${appinfos.length}-${i}`;
              return msgEntry(head + step.gap + i, appinfo);
            });
            const outcomes = await store.append({ inbox, entries });
            entries.forEach((entry, i) => {
              if (!outcomes[i]?.duplicate) appinfos.push(entry.appinfo);
            });
            head = Math.max(head, ...outcomes.filter((o) => !o.duplicate).map((o) => o.seq));
            break;
          }
          case 'lostAppend': {
            // durable, but the cache never heard of it
            const entry = msgEntry(head + step.gap, `lost${head}`);
            await engine.timeline.append({ inbox, entries: [entry] });
            appinfos.push(entry.appinfo);
            head = entry.seq;
            break;
          }
          case 'read':
            await check(step.pick > 50 ? head : Math.min(step.pick, head), step.limit);
            break;
          case 'sync': {
            // a client paging from its max seq: seen seqs must stay a prefix
            const page = await check(client.maxSeq, 3);
            client.seen.push(...page.map((entry) => entry.seq));
            client.maxSeq = page.at(-1)?.seq ?? client.maxSeq;
            break;
          }
          case 'flush':
            await redis.flushall();
            break;
          case 'expire':
            await redis.del(`${keyPrefix}tl:0:{${inbox}}`);
            break;
        }
      }
      const all = (await engine.timeline.readAfter({ inbox, afterSeq: 0, limit: 10_000 })).map((entry) => entry.seq);
      expect(client.seen).toEqual(all.slice(0, client.seen.length));
      return { hits: store.stats().readHits };
    } finally {
      store.close();
    }
  }

  it("property: with FLUSHALL between appends, every answer equals the store's", async () => {
    let hits = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb(false), { minLength: 5, maxLength: 40 }), async (ops) => {
        hits += (await play(ops, true)).hits;
      }),
      { numRuns: 60 },
    );
    expect(hits).toBeGreaterThan(0); // the cache did answer, not only the store
  });

  it('property: with lost cache writes too, answers are stale at worst, never skip', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb(true), { minLength: 5, maxLength: 40 }), async (ops) => {
        await play(ops, false);
      }),
      { numRuns: 60 },
    );
  });

  it('a restart that restores an older copy is detected; epoch-keyed caches ignore the old copy', async () => {
    const client = await connectRedis(server.url);
    const watcher = new RedisEpochWatcher({ redis: client, intervalMs: 0 });
    const changes: EpochChange[] = [];
    watcher.onChange((change) => changes.push(change));
    const keyPrefix = uniquePrefix();
    const withEpoch = new CachedTimelineStore(engine.timeline, { redis: client, keyPrefix, epoch: watcher });
    const plain = new CachedTimelineStore(engine.timeline, { redis: client, keyPrefix });
    const groupsWithEpoch = new CachedGroupStore(engine.groups, { redis: client, keyPrefix, epoch: watcher });
    const groupsPlain = new CachedGroupStore(engine.groups, { redis: client, keyPrefix: `${keyPrefix}plain:` });
    try {
      const firstRunId = await watcher.start();
      expect(firstRunId).toMatch(/^[0-9a-f]{40}$/);
      const tenant = uniqueTenant();
      const x = inboxKey(tenant, 'x');
      const y = inboxKey(tenant, 'y');
      const group: GroupRecord = {
        key: groupKey(tenant, 'g'),
        tenant,
        id: 'g',
        name: 'g',
        admin: 'a',
        tier: 'small',
        memberCount: 2,
        createdAt: 1,
      };
      await groupsWithEpoch.createGroup({ group, members: ['a', 'b'], at: { time: 1, gseq: 0 } });
      await withEpoch.append({ inbox: x, entries: [1, 2, 3, 4, 5].map((seq) => msgEntry(seq, `x${seq}`)) });
      await plain.append({ inbox: y, entries: [1, 2, 3, 4, 5].map((seq) => msgEntry(seq, `y${seq}`)) });
      expect(await groupsWithEpoch.listMembers(group.key)).toEqual(['a', 'b']);
      expect(await groupsPlain.listMembers(group.key)).toEqual(['a', 'b']);
      await client.save(); // the copy the restart will bring back
      await withEpoch.append({ inbox: x, entries: [6, 7, 8].map((seq) => msgEntry(seq, `x${seq}`)) });
      await plain.append({ inbox: y, entries: [6, 7, 8].map((seq) => msgEntry(seq, `y${seq}`)) });
      await groupsWithEpoch.removeMembers({ key: group.key, users: ['b'], at: { time: 2, gseq: 1 } });

      await server.crashAndRestart();
      await waitReady(client);
      await expect.poll(() => changes.length, { timeout: 10_000 }).toBe(1);
      expect(changes[0]).toEqual({ previous: firstRunId, current: watcher.runId });
      expect(watcher.runId).not.toBe(firstRunId);

      // Without the epoch the rolled-back copy still answers: short (stale), never with a hole.
      expect(await plain.readAfter({ inbox: y, afterSeq: 0, limit: 100 })).toEqual(
        (await engine.timeline.readAfter({ inbox: y, afterSeq: 0, limit: 100 })).slice(0, 5),
      );
      expect(await groupsPlain.listMembers(group.key)).toEqual(['a', 'b']); // stale until its TTL
      // With it, the old copy is never read: the store answers and the cache refills.
      const hits = withEpoch.stats().readHits;
      expect(await withEpoch.readAfter({ inbox: x, afterSeq: 0, limit: 100 })).toEqual(
        await engine.timeline.readAfter({ inbox: x, afterSeq: 0, limit: 100 }),
      );
      expect(withEpoch.stats().readHits).toBe(hits);
      expect(await groupsWithEpoch.listMembers(group.key)).toEqual(['a']);
      // Appends after the restart repair the plain cache too (the gap to the old head is seen).
      await plain.append({ inbox: y, entries: [msgEntry(9, 'y9')] });
      for (const after of [0, 5, 8])
        expect(await plain.readAfter({ inbox: y, afterSeq: after, limit: 100 })).toEqual(
          await engine.timeline.readAfter({ inbox: y, afterSeq: after, limit: 100 }),
        );
    } finally {
      watcher.stop();
      withEpoch.close();
      plain.close();
      groupsWithEpoch.close();
      groupsPlain.close();
      client.disconnect();
    }
  });

  it('the watcher turns the caches off while the server cannot be identified', async () => {
    const client = await connectRedis(server.url);
    const watcher = new RedisEpochWatcher({ redis: client, intervalMs: 50 });
    const store = new CachedTimelineStore(engine.timeline, { redis: client, keyPrefix: uniquePrefix(), epoch: watcher });
    try {
      const inbox = inboxKey(uniqueTenant(), 'w');
      expect(watcher.runId).toBeNull();
      await store.append({ inbox, entries: [msgEntry(1, 'w1')] }); // epoch unknown: not cached
      expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toHaveLength(1);
      expect(store.stats().readHits).toBe(0);
      await watcher.start();
      await store.append({ inbox, entries: [msgEntry(2, 'w2')] });
      expect(await store.readAfter({ inbox, afterSeq: 1, limit: 10 })).toEqual([msgEntry(2, 'w2')]);
      expect(store.stats().readHits).toBe(1);
      await server.crashAndRestart();
      await waitReady(client);
      await expect.poll(() => watcher.runId, { timeout: 10_000 }).not.toBeNull();
      expect(await store.readAfter({ inbox, afterSeq: 0, limit: 10 })).toEqual(
        await engine.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 }),
      );
    } finally {
      watcher.stop();
      store.close();
      client.disconnect();
    }
  });
});
