/** CachedGroupStore against the live Redis: hits, invalidation across processes, the fill race, TTL. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { groupKey, type GroupRecord, type GroupStore, type MemberRef, type Membership } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { uniqueTenant } from '@seqline/testing';
import { CachedGroupStore, type CachedGroupOptions } from '../src/index.ts';
import { connectRedis, deleteKeys, describeWithRedis, probeRedis, sleep, tempDir, uniquePrefix } from './harness.ts';

const probe = await probeRedis();

describeWithRedis('CachedGroupStore (live Redis)', probe, () => {
  const data = tempDir('groups');
  const keyPrefix = uniquePrefix();
  let engine: EmbeddedEngine;
  let redis: Redis;
  const opened: CachedGroupStore[] = [];

  beforeAll(async () => {
    engine = await openEmbeddedEngine({ dir: data.dir });
    redis = await connectRedis();
  });
  afterAll(async () => {
    for (const store of opened) store.close();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
    await engine.close();
    data.remove();
  });

  const cached = (inner: GroupStore = engine.groups, options: Partial<CachedGroupOptions> = {}, client = redis): CachedGroupStore => {
    const store = new CachedGroupStore(inner, { redis: client, keyPrefix, ...options });
    opened.push(store);
    return store;
  };
  const at = (time: number, gseq = 0): { time: number; gseq: number } => ({ time, gseq });
  /** A small group `g` of a new tenant, its admin alice. */
  const groupRecord = (memberCount: number): GroupRecord => {
    const tenant = uniqueTenant();
    return { key: groupKey(tenant, 'g'), tenant, id: 'g', name: 'g', admin: 'alice', tier: 'small', memberCount, createdAt: 1 };
  };
  async function newGroup(store: GroupStore, members: string[]): Promise<GroupRecord> {
    const group = groupRecord(members.length);
    expect(await store.createGroup({ group, members, at: at(1000) })).toBe(true);
    return group;
  }

  it('answers repeated reads from Redis, with the same values as the store', async () => {
    const store = cached();
    const group = await newGroup(store, ['alice', 'bob']);
    const reads = async (): Promise<unknown[]> => [
      await store.getGroup(group.key),
      await store.listMembers(group.key),
      await store.getMembership({ key: group.key, user: 'bob' }),
      await store.getMembership({ key: group.key, user: 'nobody' }),
    ];
    const first = await reads();
    const hits = store.stats().hits;
    expect(await reads()).toEqual(first);
    expect(store.stats().hits).toBe(hits + 4);
    expect(first).toEqual([
      await engine.groups.getGroup(group.key),
      await engine.groups.listMembers(group.key),
      await engine.groups.getMembership({ key: group.key, user: 'bob' }),
      null,
    ]);
  });

  it('every write invalidates, also for other processes sharing the cache', async () => {
    const other = await connectRedis();
    try {
      const writer = cached();
      const reader = cached(engine.groups, {}, other);
      const group = await newGroup(writer, ['alice']);
      expect(await reader.listMembers(group.key)).toEqual(['alice']);
      expect(await reader.getMembership({ key: group.key, user: 'bob' })).toBeNull();
      await writer.addMembers({ key: group.key, users: ['bob'], at: at(2000, 3) });
      expect(await reader.listMembers(group.key)).toEqual(['alice', 'bob']);
      expect(await reader.getMembership({ key: group.key, user: 'bob' })).toEqual({
        user: 'bob',
        windows: [{ joinedAt: 2000, fromGseq: 3 }],
      });
      await writer.removeMembers({ key: group.key, users: ['bob'], at: at(3000, 4) });
      expect(await reader.listMembers(group.key)).toEqual(['alice']);
      expect((await reader.getMembership({ key: group.key, user: 'bob' }))?.windows[0]?.toGseq).toBe(4);
      await writer.updateGroup({ key: group.key, patch: { name: 'renamed', tier: 'large' } });
      expect(await reader.getGroup(group.key)).toMatchObject({ name: 'renamed', tier: 'large' });
    } finally {
      other.disconnect();
    }
  });

  it('a read that loaded the old value before a write cannot store it after the write', async () => {
    // The reader's store read is held until the writer has written and invalidated.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let loadedOld: () => void = () => {};
    const loaded = new Promise<void>((resolve) => {
      loadedOld = resolve;
    });
    const slowInner: GroupStore = Object.create(engine.groups) as GroupStore;
    slowInner.getMembership = async (input: MemberRef): Promise<Membership | null> => {
      const value = await engine.groups.getMembership(input);
      loadedOld();
      await held;
      return value;
    };
    const reader = cached(slowInner);
    const writer = cached();
    const group = await newGroup(writer, ['alice']);
    const staleRead = reader.getMembership({ key: group.key, user: 'bob' });
    await loaded;
    await writer.addMembers({ key: group.key, users: ['bob'], at: at(2000, 1) });
    await writer.getGroup(group.key); // a fresh read re-creates the group's hash meanwhile
    release();
    expect(await staleRead).toBeNull(); // that caller raced the write, fine
    expect(await reader.getMembership({ key: group.key, user: 'bob' })).toEqual({
      user: 'bob',
      windows: [{ joinedAt: 2000, fromGseq: 1 }],
    });
    expect(await writer.getMembership({ key: group.key, user: 'bob' })).not.toBeNull();
  });

  it('a write that fails still invalidates (it may have applied)', async () => {
    let failNext = false;
    const flaky: GroupStore = Object.create(engine.groups) as GroupStore;
    flaky.addMembers = async (input) => {
      const added = await engine.groups.addMembers(input);
      if (failNext) throw new Error('timeout after apply');
      return added;
    };
    const store = cached(flaky);
    const group = await newGroup(store, ['alice']);
    expect(await store.listMembers(group.key)).toEqual(['alice']);
    failNext = true;
    await expect(store.addMembers({ key: group.key, users: ['bob'], at: at(2000) })).rejects.toThrow('timeout after apply');
    expect(await store.listMembers(group.key)).toEqual(['alice', 'bob']);
  });

  it('forwards each input whole: a field it does not know reaches the store it wraps', async () => {
    const seen = new Map<string, unknown>();
    const recording: GroupStore = Object.create(engine.groups) as GroupStore;
    for (const method of ['createGroup', 'updateGroup', 'addMembers', 'removeMembers', 'getMembership'] as const) {
      const real = engine.groups[method].bind(engine.groups) as (input: unknown) => Promise<unknown>;
      (recording as unknown as Record<string, (input: unknown) => Promise<unknown>>)[method] = (input) => {
        seen.set(method, (input as { extra?: unknown }).extra);
        return real(input);
      };
    }
    const store = cached(recording);
    const extra = { extra: 'kept' };
    const record = groupRecord(1);
    await store.createGroup({ group: record, members: ['alice'], at: at(1), ...extra });
    await store.updateGroup({ key: record.key, patch: { name: 'renamed' }, ...extra });
    await store.addMembers({ key: record.key, users: ['bob'], at: at(2, 1), ...extra });
    await store.removeMembers({ key: record.key, users: ['bob'], at: at(3, 2), ...extra });
    await store.getMembership({ key: record.key, user: 'alice', ...extra });
    expect(Object.fromEntries(seen)).toEqual({
      createGroup: 'kept',
      updateGroup: 'kept',
      addMembers: 'kept',
      removeMembers: 'kept',
      getMembership: 'kept',
    });
  });

  it('cached values live at most the TTL, counted from the first read', async () => {
    const store = cached(engine.groups, { ttlMs: 300 });
    const group = await newGroup(store, ['alice']);
    expect(await store.listMembers(group.key)).toEqual(['alice']);
    const key = `${keyPrefix}grp:0:{${group.key}}`;
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    await engine.groups.addMembers({ key: group.key, users: ['bob'], at: at(2000) }); // behind the cache's back
    expect(await store.listMembers(group.key)).toEqual(['alice']); // cached, within the TTL
    await sleep(150);
    await store.getMembership({ key: group.key, user: 'alice' }); // reads do not extend the life
    await sleep(250);
    expect(await store.listMembers(group.key)).toEqual(['alice', 'bob']);
  });

  it("many concurrent readers and writers end with the store's answer", async () => {
    const store = cached();
    const group = await newGroup(store, ['u00']);
    const users = Array.from({ length: 30 }, (_, i) => `u${String(i + 1).padStart(2, '0')}`);
    await Promise.all([
      ...users.map((user, i) => store.addMembers({ key: group.key, users: [user], at: at(2000 + i, i) })),
      ...users.map(() => store.listMembers(group.key)),
      ...users.map((user) => store.getMembership({ key: group.key, user })),
    ]);
    expect(await store.listMembers(group.key)).toEqual(await engine.groups.listMembers(group.key));
    for (const user of users)
      expect(await store.getMembership({ key: group.key, user })).toEqual(await engine.groups.getMembership({ key: group.key, user }));
  });

  it('keeps member lists decoded while their version holds: Redis confirms it and sends no list', async () => {
    const store = cached();
    const group = await newGroup(store, ['alice', 'bob']);
    const first = await store.listMemberships(group.key); // a miss: loaded and filled
    const again = await store.listMemberships(group.key);
    expect(again).toBe(first); // the same decoded list, not a copy
    expect(store.stats().decodedHits).toBe(1);
    expect(Object.isFrozen(again) && Object.isFrozen(again[0])).toBe(true);
    // Another process fills its own from Redis (a string hit), then holds it decoded too.
    const other = cached();
    expect(await other.listMemberships(group.key)).toEqual(first);
    expect(other.stats()).toMatchObject({ hits: 1, decodedHits: 0 });
    await other.listMemberships(group.key);
    expect(other.stats().decodedHits).toBe(1);
    // Single fields are not held: each read is a Redis read.
    await store.getMembership({ key: group.key, user: 'bob' });
    await store.getMembership({ key: group.key, user: 'bob' });
    expect(store.stats().decodedHits).toBe(1);
  });

  it("a decoded list is dropped by any write, from any process, by the hash's expiry and by a flush", async () => {
    const reader = cached(engine.groups, { ttlMs: 300 });
    const writer = cached();
    const group = await newGroup(writer, ['alice']);
    const users = async () => (await reader.listMemberships(group.key)).map((m) => m.user);
    expect(await users()).toEqual(['alice']);
    expect(await users()).toEqual(['alice']);
    await writer.addMembers({ key: group.key, users: ['bob'], at: at(2000, 1) });
    expect(await users()).toEqual(['alice', 'bob']);
    expect(await reader.listMembers(group.key)).toEqual(['alice', 'bob']);
    expect(await reader.listMembers(group.key)).toEqual(['alice', 'bob']);
    await engine.groups.addMembers({ key: group.key, users: ['carol'], at: at(3000, 2) }); // behind the cache's back
    await sleep(350); // the hash expires: a new version, read again from the store
    expect(await users()).toEqual(['alice', 'bob', 'carol']);
    await engine.groups.removeMembers({ key: group.key, users: ['alice'], at: at(4000, 3) });
    await redis.del(`${keyPrefix}grp:0:{${group.key}}`); // as a FLUSHALL would
    expect(await users()).toEqual(['bob', 'carol']);
    expect(reader.stats().decodedHits).toBe(2);
  });

  it('holds decoded lists up to a bound in members, least recently stored out first', async () => {
    const store = cached(engine.groups, { decodedMembers: 3 });
    const small = await newGroup(store, ['a', 'b']);
    const big = await newGroup(store, ['a', 'b', 'c', 'd']);
    await store.listMembers(small.key);
    await store.listMembers(big.key); // 4 members: over the bound, not held
    await store.listMembers(small.key);
    await store.listMembers(big.key);
    expect(store.stats().decodedHits).toBe(1);
  });
});
