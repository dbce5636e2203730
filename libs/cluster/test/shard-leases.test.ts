/** RedisShardLeases against the real Redis (unique key prefix) and the embedded ceilings. */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { RedisShardLeases } from '../src/index.ts';
import type { ShardLease } from '../src/index.ts';
import { MemoryLogger, sleep, waitFor } from './support/doubles.ts';
import { PrivateRedis, deletePrefix, newRedis, openTempStore, probeServices, redisServerAvailable, uniqueId } from './support/services.ts';
import type { TempStore } from './support/services.ts';

const services = await probeServices();
const TTL = 600;

describe.skipIf(!services.ok)('RedisShardLeases', () => {
  let redis: Redis;
  let store: TempStore;
  const prefix = uniqueId('seqline-test:leases:');
  const make = (ownerId: string, extra: { logger?: MemoryLogger; ttlMs?: number; wallClock?: () => number } = {}) =>
    new RedisShardLeases({
      redis,
      ceilings: store.engine.ceilings,
      ownerId,
      ttlMs: extra.ttlMs ?? TTL,
      keyPrefix: prefix,
      logger: extra.logger,
      wallClock: extra.wallClock,
    });
  /** What a holder that crashed leaves behind: an epoch drawn, never released. */
  const crashedHolder = (shard: number) => store.engine.ceilings.drawEpoch({ scope: `shard-${shard}` });

  beforeAll(async () => {
    redis = newRedis();
    store = await openTempStore();
  });
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await store.close();
  });

  it('grants a shard to one holder at a time, each acquisition with a new durable epoch', async () => {
    const a = make('a');
    const b = make('b');
    const [la, lb] = await Promise.all([a.acquire(1), b.acquire(1)]);
    const winner = (la ?? lb) as ShardLease;
    expect([la, lb].filter(Boolean)).toHaveLength(1);
    expect(await a.holders([1, 2])).toEqual(
      new Map([
        [1, la ? 'a' : 'b'],
        [2, null],
      ]),
    );
    await (la ? a : b).release(winner);
    const again = await b.acquire(1);
    expect(again?.epoch).toBeGreaterThan(winner.epoch);
    await b.release(again as ShardLease);
  });

  it('makes a fresh lease writable only after ttl + margin when the previous holder did not release (rule a)', async () => {
    await crashedHolder(2);
    const a = make('a');
    const t0 = performance.now();
    const lease = (await a.acquire(2)) as ShardLease;
    expect(lease.handover).toBe('not-released');
    a.start();
    try {
      expect(a.stateOf(lease)).toBe('waiting');
      expect(a.writeBlocker(lease)).toMatch(/waiting out/);
      await waitFor('writable', () => a.stateOf(lease) === 'writable', 5000, 5);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(TTL + a.marginMs);
      // Renewals keep it writable well past the ttl.
      await sleep(TTL * 2);
      expect(a.stateOf(lease)).toBe('writable');
    } finally {
      a.stop();
      await a.release(lease);
    }
  });

  it('fences an owner that stops renewing before its key can expire (rule b); the next holder voids it', async () => {
    // A longer ttl (margin 200 ms) so a busy test machine does not blur the two deadlines.
    const a = make('a', { ttlMs: 2000 });
    const b = make('b', { ttlMs: 2000 });
    const lost: string[] = [];
    a.onLost((_l, reason) => lost.push(reason));
    const lease = (await a.acquire(3)) as ShardLease;
    const fencedAt = lease.renewStartedAt + a.ttlMs - a.marginMs;
    await waitFor('fenced', () => a.stateOf(lease) === 'fenced', 5000, 5);
    expect(performance.now()).toBeGreaterThanOrEqual(fencedAt);
    // Redis expires the key at the earliest ttl after the acquire started: fenced before that.
    expect(await redis.exists(a.keyOf(3))).toBe(1);
    const next = await waitFor('b takes over', () => b.acquire(3), 5000, 20);
    expect(next.epoch).toBeGreaterThan(lease.epoch);
    await a.renewAll();
    expect(a.stateOf(lease)).toBe('lost');
    expect(lost).toEqual(['lease taken by b']);
    await a.release(lease); // must not delete b's key
    expect(await b.holders([3])).toEqual(new Map([[3, 'b']]));
    await b.release(next);
  });

  it('loses a lease whose key vanished (FLUSHALL), and re-acquiring gives a new epoch and a new wait-out (rule c)', async () => {
    const logger = new MemoryLogger();
    const a = make('a', { logger });
    const lost: number[] = [];
    a.onLost((l) => lost.push(l.shard));
    const lease = (await a.acquire(4)) as ShardLease;
    await deletePrefix(redis, prefix); // what FLUSHALL does to our keys
    await a.renewAll();
    expect(lost).toEqual([4]);
    expect(a.writeBlocker(lease)).toBe('lease key vanished');
    const again = (await a.acquire(4)) as ShardLease;
    expect(again.epoch).toBeGreaterThan(lease.epoch);
    expect(a.stateOf(again)).toBe('waiting');
    expect(a.stateOf(lease)).toBe('lost');
    await a.release(again);
  });

  it('makes a lease of a shard that never had an epoch writable at once', async () => {
    const a = make('a');
    const lease = (await a.acquire(10)) as ShardLease;
    expect(lease).toMatchObject({ epoch: 1, handover: 'never-owned' });
    expect(a.stateOf(lease)).toBe('writable');
    await a.release(lease);
  });

  it('records a clean release and the next holder is writable at once; without `stopped` nothing is recorded', async () => {
    const a = make('a');
    const b = make('b');
    await crashedHolder(11);
    const first = (await a.acquire(11)) as ShardLease;
    a.start();
    try {
      await waitFor('writable', () => a.stateOf(first) === 'writable', 5000, 5);
      expect(await a.release(first, { stopped: true })).toBe(true);
      expect(a.writeBlocker(first)).toBe('released');
      const second = (await b.acquire(11)) as ShardLease;
      expect(second).toMatchObject({ epoch: first.epoch + 1, handover: 'released' });
      expect(b.stateOf(second)).toBe('writable');
      // The caller did not vouch that its writers stopped: the next holder waits out.
      expect(await b.release(second)).toBe(false);
      const third = (await a.acquire(11)) as ShardLease;
      expect(third).toMatchObject({ epoch: second.epoch + 1, handover: 'not-released' });
      expect(a.stateOf(third)).toBe('waiting');
      await a.release(third);
    } finally {
      a.stop();
    }
  });

  it('records nothing for a lease given up while still waiting out, nor for a lost or a self-fenced one', async () => {
    const a = make('a');
    // Waiting: its predecessor may still be writing, so its release could not vouch for it.
    await crashedHolder(12);
    const waiting = (await a.acquire(12)) as ShardLease;
    expect(a.stateOf(waiting)).toBe('waiting');
    expect(await a.release(waiting, { stopped: true })).toBe(false);
    expect(((await a.acquire(12)) as ShardLease).handover).toBe('not-released');

    // Lost: its key vanished, another holder may have the shard.
    const fresh = (await a.acquire(13)) as ShardLease;
    expect(a.stateOf(fresh)).toBe('writable');
    await redis.del(a.keyOf(13));
    await a.renewAll();
    expect(a.stateOf(fresh)).toBe('lost');
    expect(await a.release(fresh, { stopped: true })).toBe(false);
    expect(((await a.acquire(13)) as ShardLease).handover).toBe('not-released');

    // Self-fenced: it could not renew in time (rule b).
    let jump = 0;
    const paused = new RedisShardLeases({
      redis,
      ceilings: store.engine.ceilings,
      ownerId: 'p',
      ttlMs: TTL,
      keyPrefix: prefix,
      now: () => performance.now() + jump,
    });
    const lease = (await paused.acquire(14)) as ShardLease;
    expect(paused.stateOf(lease)).toBe('writable');
    jump = TTL;
    expect(paused.stateOf(lease)).toBe('fenced');
    expect(await paused.release(lease, { stopped: true })).toBe(false);
    expect(((await a.acquire(14)) as ShardLease).handover).toBe('not-released');
  });

  it('does not trust a release once a later epoch was drawn (a holder in between may be writing)', async () => {
    const a = make('a');
    const b = make('b');
    const first = (await a.acquire(15)) as ShardLease;
    expect(await a.release(first, { stopped: true })).toBe(true);
    // A holder that drew the next epoch and crashed before it could write or release.
    const between = await crashedHolder(15);
    expect(between.before).toEqual({ epoch: first.epoch, released: { epoch: first.epoch, atMs: expect.any(Number) } });
    const next = (await b.acquire(15)) as ShardLease;
    expect(next).toMatchObject({ epoch: between.epoch + 1, handover: 'not-released' });
    expect(b.stateOf(next)).toBe('waiting');
    // The in-between holder cannot record a release of its own now either.
    expect(await store.engine.ceilings.recordRelease({ scope: 'shard-15', epoch: between.epoch, atMs: Date.now() })).toBe(false);
    await b.release(next);
  });

  it("after a clean release, waits until its own wall clock has passed the releaser's", async () => {
    const a = make('a');
    const behind = make('b', { wallClock: () => Date.now() - 300 });
    const first = (await a.acquire(16)) as ShardLease;
    expect(await a.release(first, { stopped: true })).toBe(true);
    const t0 = performance.now();
    const next = (await behind.acquire(16)) as ShardLease;
    expect(next.handover).toBe('released');
    expect(behind.stateOf(next)).toBe('waiting');
    await waitFor('writable', () => behind.stateOf(next) === 'writable', 5000, 5);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(performance.now() - t0).toBeLessThan(TTL + behind.marginMs);
    await behind.release(next);
  });

  it('release deletes only the key of its own lease', async () => {
    const a = make('a');
    const first = (await a.acquire(5)) as ShardLease;
    await a.release(first);
    const second = (await a.acquire(5)) as ShardLease;
    await a.release(first); // a stale handle: token differs, key stays
    expect(await redis.get(a.keyOf(5))).toBe(second.token);
    await a.release(second);
    expect(await redis.exists(a.keyOf(5))).toBe(0);
  });
});

describe.skipIf(!services.ok || !redisServerAvailable())('RedisShardLeases across a Redis restart (private redis-server)', () => {
  it('voids a lease when the run_id changes, even though the AOF restored its key', async () => {
    const server = await PrivateRedis.start({ aof: true });
    const redis = newRedis(server.url);
    const store = await openTempStore();
    try {
      const a = new RedisShardLeases({ redis, ceilings: store.engine.ceilings, ownerId: 'a', ttlMs: 3000, keyPrefix: 'seqline:' });
      const lost: string[] = [];
      a.onLost((_l, reason) => lost.push(reason));
      const lease = (await a.acquire(0)) as ShardLease;
      await a.renewAll();
      expect(lost).toEqual([]);
      await server.restart();
      expect(await waitFor('key restored', () => redis.get(a.keyOf(0)), 5000)).toBe(lease.token);
      await a.renewAll();
      expect(lost).toEqual(['redis restarted or failed over (run_id changed)']);
      expect(a.stateOf(lease)).toBe('lost');
      // Its own stale key is cleaned up by release; a new lease has a new epoch.
      await a.release(lease);
      const again = (await a.acquire(0)) as ShardLease;
      expect(again.epoch).toBeGreaterThan(lease.epoch);
      await a.release(again);
    } finally {
      redis.disconnect();
      await server.destroy();
      await store.close();
    }
  });
});
