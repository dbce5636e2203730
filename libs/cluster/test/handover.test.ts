/**
 * When a new shard owner may write (core's handoverWait, applied by RedisShardLeases) and how a
 * caller can tell that appends can be served (ShardOwnerHost.readiness, ShardReadiness and the
 * `ready` probe), on the real Redis and NATS with the embedded ceilings. The same on CQL:
 * handover.cql.test.ts.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import { RedisShardLeases, ShardReadiness } from '../src/index.ts';
import type { ShardLease } from '../src/index.ts';
import { useRigPerTest } from './support/cluster.ts';
import { inboxInShard, msg, waitFor } from './support/doubles.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const TTL = 1000;
const SHARDS = 4;
const allShards = Array.from({ length: SHARDS }, (_, i) => i);

describe.skipIf(!services.ok)('shard handover', () => {
  const svc = useSuiteServices();
  const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: TTL });

  it('after a crash (an epoch drawn, never released, its key left to expire) the successor waits out the lease', async () => {
    const rig = fresh();
    const shard = 2;
    // What a holder that died leaves: its lease key (expiring by itself) and its epoch.
    const dead = new RedisShardLeases({
      redis: svc.redis,
      ceilings: svc.store.engine.ceilings,
      ownerId: 'dead',
      ttlMs: TTL,
      keyPrefix: rig.keyPrefix,
    });
    const crashed = (await dead.acquire(shard)) as ShardLease;
    const t0 = performance.now();
    const b = rig.host('host-b', { desiredShards: [shard] });
    await b.start();
    const readiness = new ShardReadiness({ nc: svc.nc, shardCount: SHARDS, subjectPrefix: rig.subjectPrefix, timeoutMs: 300 });
    try {
      expect(b.readiness()).toMatchObject({ ready: false, pending: [shard] });
      await waitFor('b serves the shard', () => b.servingShards().includes(shard), 10_000);
      const acquired = rig.logger.find('shard lease acquired', { shard, host: 'host-b' })[0]!;
      expect(acquired.obj).toMatchObject({ handover: 'not-released', epoch: crashed.epoch + 1 });
      const serving = rig.logger.find('serving shard', { shard, host: 'host-b' })[0]!;
      expect(serving.at - acquired.at).toBeGreaterThanOrEqual(TTL); // counted from before the epoch draw that precedes this log line
      // The key had to expire first, then the whole wait-out.
      expect(performance.now() - t0).toBeGreaterThanOrEqual(2 * TTL);
      expect(b.readiness()).toEqual({ ready: true, serving: [shard], pending: [] });
      // Only shard 2 has an owner: a gateway is not ready.
      expect(await readiness.check()).toEqual({ ready: false, shardCount: SHARDS, unserved: [0, 1, 3] });
    } finally {
      readiness.close();
    }
  });

  it('a gateway is ready exactly when every shard has an owner that would take an append', async () => {
    const rig = fresh();
    // Every shard last held by a holder that crashed: a new host waits each one out.
    const dead = new RedisShardLeases({
      redis: svc.redis,
      ceilings: svc.store.engine.ceilings,
      ownerId: 'dead',
      ttlMs: TTL,
      keyPrefix: `${rig.keyPrefix}gone:`,
    });
    for (const shard of allShards) await dead.acquire(shard);
    const readiness = new ShardReadiness({
      nc: svc.nc,
      shardCount: SHARDS,
      subjectPrefix: rig.subjectPrefix,
      timeoutMs: 300,
      cacheMs: 60_000,
    });
    try {
      expect(await readiness.check()).toEqual({ ready: false, shardCount: SHARDS, unserved: allShards });
      const a = rig.host('host-a');
      await a.start();
      // Subscribed only once writable: waiting out, the owner does not answer probes at all.
      expect(a.readiness()).toMatchObject({ ready: false, serving: [], pending: allShards });
      expect((await readiness.check()).ready).toBe(false);
      const ready = await waitFor('all shards served', async () => ((await readiness.check()).ready ? true : undefined), 10_000);
      expect(ready).toBe(true);
      expect(a.readiness().ready).toBe(true);
      // An append goes through as soon as the probe says so.
      const inbox = inboxInShard(`t${Date.now().toString(36)}`, 1, SHARDS);
      const t0 = performance.now();
      await rig.writer().append({ inbox, entries: [msg()] });
      expect(performance.now() - t0).toBeLessThan(TTL);
      // A ready answer is reused (one probe round per cacheMs), a not-ready one is not.
      await a.close();
      expect((await readiness.check()).ready).toBe(true);
    } finally {
      readiness.close();
    }
    const again = new ShardReadiness({ nc: svc.nc, shardCount: SHARDS, subjectPrefix: rig.subjectPrefix, timeoutMs: 300 });
    try {
      expect((await again.check()).unserved).toEqual(allShards);
    } finally {
      again.close();
    }
  });

  it('answers hostile ready probes with a final error, and a forged release notice costs one balancing round only', async () => {
    const rig = fresh();
    const a = rig.host('host-a');
    await a.start();
    await waitFor('a serves all', () => a.servingShards().length === SHARDS);
    const ask = async (shard: number, body: unknown) =>
      (await svc.nc.request(`${rig.subjectPrefix}.${shard}`, JSON.stringify(body), { timeout: 2000 })).json<unknown>();
    expect(await ask(1, { op: 'ready', shard: 1 })).toEqual({ ok: true });
    // A probe routed to another shard's subject: the owner does not vouch for a shard it is not.
    expect(await ask(1, { op: 'ready', shard: 2 })).toMatchObject({ ok: false, error: { code: 'INTERNAL', retryable: false } });
    for (const bad of [
      { op: 'ready' },
      { op: 'ready', shard: '1' },
      { op: 'ready', shard: -1 },
      { op: 'ready', shard: 1.5 },
      { op: 'ready', shard: 1, inbox: 't:x', entries: [msg()] },
    ]) {
      expect(await ask(1, bad)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', retryable: false } });
    }

    const epochs = a.shardStates();
    const rounds = () => rig.logger.find('shard owners changed').length;
    const before = rounds();
    for (const forged of ['{"owner":"host-a","shard":1}', '{"owner":"mallory","shard":99}', 'not json', '']) {
      svc.nc.publish(`${rig.subjectPrefix}.released`, forged);
    }
    await svc.nc.flush();
    // Nothing moves: the keys are still a's, every shard keeps its owner and its epoch.
    await waitFor('a balancing round', () => a.servingShards().length === SHARDS);
    expect(a.shardStates()).toEqual(epochs);
    expect(rounds()).toBe(before);
    const inbox = inboxKey(`t${Date.now().toString(36)}`, 'after-forgery');
    expect(await rig.writer().append({ inbox, entries: [msg()] })).toMatchObject([{ duplicate: false }]);
  });
});
