/**
 * Fault d (issue 3): a `nats-server` restart during a send loop. While it is down, appends
 * cannot reach the shard owners and jobs cannot be queued: sends fail or time out and clients
 * resend. JetStream keeps the queued fanout jobs on disk. Every acknowledged send — 1:1 and to
 * a small group — is delivered to every inbox it names; nothing twice, no seq goes back.
 */
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { formatCounts, ZERO } from './support/audit.ts';
import { formatErrors } from './support/clients.ts';
import { Cluster } from './support/cluster.ts';
import { ensureUp, probeAll, requireServices, servicesSh } from './support/services.ts';
import { acksBetween, failedAttempts, heldAcross, startTraffic } from './support/traffic.ts';

if (requireServices(await probeAll(), 'fault d: nats-server restart')) {
  describe('fault d: nats-server restart during a send loop', () => {
    let cluster: Cluster | undefined;
    afterAll(async () => {
      await cluster?.close();
    }, 60_000);

    it('every acknowledged send is delivered (1:1 and a small group)', async () => {
      cluster = await Cluster.start({ workers: 2, gateways: 2 });
      onTestFailed(() => {
        if (cluster) console.log(`process logs:\n${cluster.report()}`);
      });
      const c = cluster;
      const traffic = await startTraffic(c, { senders: 3, recipients: 3, groupMembers: 4 });
      let stopAt = 0;
      let downAt = 0;
      let upAt = 0;
      try {
        await traffic.advance(60, 30_000, 'sends flowing before the restart');
        stopAt = Date.now();
        await servicesSh('stop', 'nats');
        downAt = Date.now();
        await new Promise((r) => setTimeout(r, 2000)); // a real outage, not only a blip
        await servicesSh('start', 'nats');
        upAt = Date.now();
        await traffic.advance(60, 90_000, 'sends flowing after the restart');
      } finally {
        await ensureUp('nats');
      }
      const { stats, counts } = await traffic.finish(90_000);
      const groupAcks = stats.acks.filter((a) => 'group' in a.to);
      console.log(
        `fault d: acks=${stats.acks.length} (group ${groupAcks.length}; before ${acksBetween(stats, 0, stopAt)}, ` +
          `while stopping/down ${acksBetween(stats, stopAt, upAt)}, after restart ${acksBetween(stats, upAt)}) ` +
          `errors: ${formatErrors(stats.errors)} timeouts=${stats.timeouts} held across the outage=${heldAcross(stats, downAt)}; outage ${upAt - downAt}ms (stop took ${downAt - stopAt}ms); ` +
          `${formatCounts(counts)}`,
      );
      // An INTERNAL error's cause is only in the gateway's log: print it, so a failed run says what it was.
      const failed = c.gateways.flatMap((g) => g.logged('request failed')).map((r) => JSON.stringify(r.err).slice(0, 300));
      if (failed.length > 0) console.log(`fault d: INTERNAL causes:\n  ${failed.join('\n  ')}`);
      expect(counts).toEqual(ZERO);
      expect(acksBetween(stats, 0, stopAt)).toBeGreaterThan(0);
      expect(acksBetween(stats, upAt)).toBeGreaterThan(0);
      // The outage was felt: sends failed and were resent, or were held until NATS came back.
      expect(failedAttempts(stats) + heldAcross(stats, downAt)).toBeGreaterThan(0);
      expect(groupAcks.filter((a) => a.at > upAt).length, 'group sends acknowledged after the restart').toBeGreaterThan(0);
      // Typed and retryable: the shard requester and the job queue map an unreachable NATS to OVERLOADED.
      expect(
        [...stats.errors.keys()].filter((code) => code !== 'OVERLOADED'),
        'only typed, retryable errors',
      ).toEqual([]);
    }, 240_000);
  });
}
