/**
 * Shard handover on the real stores: leases in Redis, epochs, release records, ceilings and the
 * timeline in Cassandra (CQL LWTs), requests over NATS. A fresh keyspace of this file's own is
 * a fresh deployment (no shard ever had an epoch); it is dropped afterwards.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxKey, type AppendOutcome } from '@seqline/core';
import { requireServices } from '@seqline/testing';
import { RedisShardLeases, ShardReadiness } from '../src/index.ts';
import type { ShardLease } from '../src/index.ts';
import { readAll, useRigPerTest } from './support/cluster.ts';
import { openServicesAndCql } from './support/cql.ts';
import { firstNonIncreasing, msg, sleep, waitFor } from './support/doubles.ts';
import { uniqueId, useSuiteServices } from './support/services.ts';

const SHARDS = 4;
const TTL = 2000;
const allShards = Array.from({ length: SHARDS }, (_, i) => i);
const KEYSPACE = uniqueId('seqline_handover_');
const cql = await openServicesAndCql(KEYSPACE);

if (requireServices(cql, 'shard handover on CQL', 'Cassandra, Redis and NATS') && cql.ok) {
  const stores = cql.stores;
  const onCql = { ceilings: stores.ceilings, timeline: stores.timeline, groupStreams: stores.groupStreams };

  /** The epoch rows of the shards, read straight from the table. */
  async function epochRows(): Promise<Map<number, { epoch: number; released: number | null }>> {
    const rows = await stores.client.execute(
      `SELECT scope, epoch, released FROM ${KEYSPACE}.seq_epoch WHERE scope IN ?`,
      [allShards.map((s) => `shard-${s}`)],
      { prepare: true },
    );
    return new Map(
      rows.rows.map((r) => [
        Number(String(r.get('scope')).slice('shard-'.length)),
        { epoch: Number(r.get('epoch')), released: r.get('released') === null ? null : Number(r.get('released')) },
      ]),
    );
  }

  describe('shard handover on CQL', () => {
    const svc = useSuiteServices();
    const fresh = useRigPerTest(svc, { shardCount: SHARDS, ttl: TTL });
    afterAll(async () => {
      // Schema changes are slow on a busy node: give it time rather than fail the suite.
      await stores.client.execute(`DROP KEYSPACE IF EXISTS ${KEYSPACE}`, [], { readTimeout: 120_000 });
      await stores.close();
    });

    it('a fresh deployment serves every shard at once; a graceful close hands each over at once, nothing lost', async () => {
      const rig = fresh();
      const readiness = new ShardReadiness({ nc: svc.nc, shardCount: SHARDS, subjectPrefix: rig.subjectPrefix, timeoutMs: 1000 });
      try {
        const a = rig.host('host-a', onCql);
        const t0 = performance.now();
        await a.start();
        await waitFor('a serves all', () => a.servingShards().length === SHARDS, 20_000);
        // No shard ever had an epoch: nothing to wait out.
        expect(performance.now() - t0).toBeLessThan(TTL);
        for (const s of allShards) {
          expect(rig.logger.find('shard lease acquired', { shard: s, host: 'host-a' })[0]?.obj).toMatchObject({
            epoch: 1,
            handover: 'never-owned',
          });
        }
        expect(await readiness.check()).toMatchObject({ ready: true, unserved: [] });

        const writer = rig.writer();
        const tenant = `t${Date.now().toString(36)}`;
        const inboxes = allShards.map((i) => inboxKey(tenant, `loop${i}`));
        let stop = false;
        const loops = inboxes.map(async (inbox) => {
          const outcomes: AppendOutcome[] = [];
          const appinfos: string[] = [];
          let slowest = 0;
          for (let i = 0; !stop; i++) {
            const appinfo = `${inbox}-${i}`;
            appinfos.push(appinfo);
            const sent = performance.now();
            outcomes.push(...(await writer.append({ inbox, entries: [msg(appinfo)] })));
            slowest = Math.max(slowest, performance.now() - sent);
          }
          return { inbox, outcomes, appinfos, slowest };
        });
        const b = rig.host('host-b', onCql);
        await b.start();
        await sleep(300);
        const closing = performance.now();
        await a.close(); // mid-loop
        await waitFor('b serves all', () => b.servingShards().length === SHARDS, 20_000);
        expect(performance.now() - closing).toBeLessThan(TTL);
        await sleep(300);
        stop = true;

        const rows = await epochRows();
        for (const s of allShards) {
          // a recorded its release in the epoch row; b drew the next epoch and saw it.
          expect(rig.logger.find('shard lease released', { shard: s, host: 'host-a' }).at(-1)?.obj).toMatchObject({ recorded: true });
          expect(rig.logger.find('shard lease acquired', { shard: s, host: 'host-b' }).at(-1)?.obj).toMatchObject({ handover: 'released' });
          const row = rows.get(s)!;
          expect(row.released).toBe(row.epoch - 1);
        }
        for (const { inbox, outcomes, appinfos, slowest } of await Promise.all(loops)) {
          expect(outcomes.length).toBeGreaterThan(3);
          expect(outcomes.every((o) => !o.duplicate)).toBe(true);
          expect(firstNonIncreasing(outcomes.map((o) => o.seq))).toBeUndefined();
          const stored = await readAll(stores.timeline, inbox);
          expect(stored.map((e) => e.appinfo)).toEqual(appinfos);
          expect(stored.map((e) => e.seq)).toEqual(outcomes.map((o) => o.seq));
          // No send waited out a lease.
          expect(slowest).toBeLessThan(TTL);
        }
      } finally {
        readiness.close();
      }
    });

    it('after a crash (an epoch drawn and never released) the successor waits out the lease; its own clean release then counts', async () => {
      const rig = fresh();
      const shard = 1;
      const dead = new RedisShardLeases({
        redis: svc.redis,
        ceilings: stores.ceilings,
        ownerId: 'dead',
        ttlMs: TTL,
        keyPrefix: rig.keyPrefix,
      });
      const crashed = (await dead.acquire(shard)) as ShardLease;
      const left = (await epochRows()).get(shard)!;
      expect(left.epoch).toBe(crashed.epoch);
      expect(left.released).not.toBe(crashed.epoch);

      const b = rig.host('host-b', { ...onCql, desiredShards: [shard] });
      await b.start();
      await waitFor('b serves the shard', () => b.servingShards().includes(shard), 20_000);
      const acquired = rig.logger.find('shard lease acquired', { shard, host: 'host-b' })[0]!;
      expect(acquired.obj).toMatchObject({ epoch: crashed.epoch + 1, handover: 'not-released' });
      const serving = rig.logger.find('serving shard', { shard, host: 'host-b' })[0]!;
      expect(serving.at - acquired.at).toBeGreaterThanOrEqual(TTL); // counted from before the epoch draw that precedes this log line

      await b.close();
      expect((await epochRows()).get(shard)).toEqual({ epoch: crashed.epoch + 1, released: crashed.epoch + 1 });
      const c = rig.host('host-c', { ...onCql, desiredShards: [shard] });
      const t0 = performance.now();
      await c.start();
      await waitFor('c serves the shard', () => c.servingShards().includes(shard), 20_000);
      expect(performance.now() - t0).toBeLessThan(TTL);
    });
  });
}
