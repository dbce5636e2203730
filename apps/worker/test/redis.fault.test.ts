/**
 * Fault c (issue 3): Redis `FLUSHALL`, then a Redis restart, during a send loop. Every lease
 * vanishes (then comes back from the AOF under a new run_id, which voids it): owners must stop,
 * re-acquire with a new epoch and wait out the ttl. Seqs only jump forward, nothing is
 * duplicated, every acknowledged message is in its inboxes, tailers skip nothing.
 */
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { formatCounts, ZERO } from './support/audit.ts';
import { formatErrors } from './support/clients.ts';
import { Cluster } from './support/cluster.ts';
import { ensureUp, probeAll, redisFlushAll, requireServices, servicesSh } from './support/services.ts';
import { acksBetween, startTraffic } from './support/traffic.ts';

type Epochs = { shard: number; before: number; after: number }[];
const higher = (epochs: Epochs) => epochs.filter((e) => e.after > e.before).length;

if (requireServices(await probeAll(), 'fault c: Redis FLUSHALL then restart')) {
  describe('fault c: Redis FLUSHALL, then a Redis restart, during a send loop', () => {
    let cluster: Cluster | undefined;
    afterAll(async () => {
      await cluster?.close();
    }, 60_000);

    it('seqs jump forward only, no duplicates, every acknowledged message present', async () => {
      cluster = await Cluster.start({ workers: 2, gateways: 2 });
      onTestFailed(() => {
        if (cluster) console.log(`process logs:\n${cluster.report()}`);
      });
      const c = cluster;
      const traffic = await startTraffic(c, { senders: 3, recipients: 3, groupMembers: 3 });
      let flushAt = 0;
      let restartAt = 0;
      let upAt = 0;
      let afterFlush: Epochs = [];
      let afterRestart: Epochs = [];
      try {
        await traffic.advance(60, 30_000, 'sends flowing before the flush');
        flushAt = Date.now();
        await redisFlushAll();
        afterFlush = await c.waitAllServedSince(flushAt, 60_000);
        await traffic.advance(60, 60_000, 'sends flowing after the flush');
        restartAt = Date.now();
        await servicesSh('stop', 'redis');
        await servicesSh('start', 'redis');
        upAt = Date.now();
        afterRestart = await c.waitAllServedSince(restartAt, 60_000);
        await traffic.advance(60, 60_000, 'sends flowing after the restart');
      } finally {
        await ensureUp('redis');
      }
      const { stats, counts } = await traffic.finish();
      const lost = (from: number, to: number) =>
        c.workers.reduce((n, w) => n + w.records.filter((r) => r.msg === 'shard lease lost' && r.time >= from && r.time < to).length, 0);
      const runIdChanged = c.workers.filter((w) =>
        w.records.some((r) => r.msg.startsWith('redis run_id changed') && r.time >= restartAt),
      ).length;
      console.log(
        `fault c: acks=${stats.acks.length} (before flush ${acksBetween(stats, 0, flushAt)}, after flush ${acksBetween(stats, flushAt, restartAt)}, ` +
          `after restart ${acksBetween(stats, upAt)}) errors: ${formatErrors(stats.errors)} timeouts=${stats.timeouts}; restart took ${upAt - restartAt}ms; ` +
          `leases lost: ${lost(flushAt, restartAt)} after the flush, ${lost(restartAt, Infinity)} after the restart ` +
          `(run_id change seen by ${runIdChanged}/${c.workers.length} workers); every shard re-served with a higher epoch: ` +
          `${higher(afterFlush)}/64 after the flush, ${higher(afterRestart)}/64 after the restart; ${formatCounts(counts)}`,
      );
      expect(counts).toEqual(ZERO);
      expect(acksBetween(stats, 0, flushAt)).toBeGreaterThan(0);
      expect(acksBetween(stats, flushAt, restartAt)).toBeGreaterThan(0);
      expect(acksBetween(stats, upAt)).toBeGreaterThan(0);
      // The faults really hit the leases: every shard was re-acquired with a new epoch after each.
      expect(higher(afterFlush)).toBe(64);
      expect(higher(afterRestart)).toBe(64);
    }, 240_000);
  });
}
