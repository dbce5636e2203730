/**
 * Starts and planned handovers without a lease wait-out, as real processes (2 workers, 1
 * gateway) on Cassandra, Redis and NATS: a fresh deployment (a keyspace of its own: no shard
 * ever had an epoch) serves at once, and a rolling restart (SIGTERM a worker, start it again,
 * wait for its /readyz, then the next) never stalls a send for a lease ttl and loses none.
 * The ttl is long (6 s) so that a wait-out would stand out from any slowness of the machine.
 */
import { Client } from 'cassandra-driver';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TestClient, waitFor } from '../../server/test/harness.ts';
import { httpSyncAll, mergeStats, sendLoop, formatErrors, type SendStats } from './support/clients.ts';
import { Cluster, SHARDS, uniqueId, type NodeProcess } from './support/cluster.ts';
import { CQL_CONTACT, probeAll, requireServices } from './support/services.ts';

const LEASE_TTL_MS = 6000;
const KEYSPACE = uniqueId('seqline_roll_');

async function readyz(p: NodeProcess): Promise<number> {
  try {
    return (await fetch(`${p.httpUrl}/readyz`)).status;
  } catch {
    return 0; // not listening (yet, or any more)
  }
}

if (requireServices(await probeAll(), 'rolling restart of 2 workers')) {
  describe('starts and rolling restarts without a lease wait-out', () => {
    let cluster: Cluster | undefined;

    afterEach(({ task }) => {
      if (task.result?.state === 'fail' && cluster) console.log(`process logs:\n${cluster.report()}`);
    });

    afterAll(async () => {
      await cluster?.close();
      const client = new Client({ contactPoints: [CQL_CONTACT], localDataCenter: process.env.SCYLLA_LOCAL_DC ?? 'datacenter1' });
      try {
        await client.execute(`DROP KEYSPACE IF EXISTS ${KEYSPACE}`, [], { readTimeout: 120_000 });
      } finally {
        await client.shutdown();
      }
    }, 180_000);

    it('serves a fresh deployment at once, then restarts both workers one by one: no stall of a ttl, nothing lost', async () => {
      cluster = await Cluster.start({ workers: 2, gateways: 1, leaseTtlMs: LEASE_TTL_MS, env: { SCYLLA_KEYSPACE: KEYSPACE } });
      const c = cluster;
      const gw = c.gateways[0]!;
      // Fresh keyspace: every first lease was never-owned, so no worker waited one out.
      const firstLeases = c.workers.flatMap((w) => w.logged('shard lease acquired')).filter((r) => r.epoch === 1);
      expect(new Set(firstLeases.map((r) => r.shard)).size).toBe(SHARDS);
      expect(firstLeases.every((r) => r.handover === 'never-owned' && r.waitMs === 0)).toBe(true);
      for (const p of [...c.workers, gw]) expect(await readyz(p)).toBe(200);

      const probe = await TestClient.connect(gw.url, 'probe', c.tenant);
      expect((await probe.call('send', { appinfo: uniqueId('p'), to: { user: 'probe' }, type: 'text', body: {} })).ok).toBe(true);
      probe.close();

      let stop = false;
      const users = ['u1', 'u2', 'u3', 'u4'];
      const loops: Promise<SendStats>[] = users.map((user, i) =>
        sendLoop({ urls: [gw.url], tenant: c.tenant, user, target: () => ({ user: users[(i + 1) % users.length]! }), stop: () => stop }),
      );
      const restarts: { worker: string; handovers: number; notReleased: number }[] = [];
      for (const w of c.workers) {
        const since = Date.now();
        await w.terminate();
        await w.start();
        await waitFor(async () => (await readyz(w)) === 200, 60_000, `${w.name} ready again`);
        // Every shard that moved in this round went to a successor that found a clean release.
        const moved = c.workers.flatMap((x) => x.logged('shard lease acquired')).filter((r) => r.time >= since);
        restarts.push({
          worker: w.name,
          handovers: moved.length,
          notReleased: moved.filter((r) => r.handover !== 'released').length,
        });
      }
      await waitFor(async () => (await readyz(gw)) === 200, 30_000, 'gateway ready');
      stop = true;
      const stats = mergeStats(await Promise.all(loops));

      expect(restarts.every((r) => r.handovers > 0 && r.notReleased === 0)).toBe(true);
      const slowest = Math.max(...stats.acks.map((a) => a.at - a.sentAt));
      // A wait-out would hold a send for more than the ttl; a clean handover takes well under it.
      expect(slowest, `slowest send ${slowest} ms; errors ${formatErrors(stats.errors)}`).toBeLessThan(LEASE_TTL_MS / 2);
      expect(stats.acks.length).toBeGreaterThan(50);
      expect(stats.timeouts).toBe(0);
      // Every acknowledged send is in its recipient's inbox, once.
      for (const user of users) {
        const stored = (await httpSyncAll(gw.httpUrl, c.tenant, user)).filter((e) => e.kind === 'msg');
        const expected = stats.acks.filter((a) => 'user' in a.to && a.to.user === user).map((a) => a.appinfo);
        const got = stored.map((e) => e.appinfo);
        expect(got.filter((a) => expected.includes(a)).sort()).toEqual([...new Set(expected)].sort());
        expect(new Set(got).size).toBe(got.length);
      }
    }, 400_000);
  });
}
