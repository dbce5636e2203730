/**
 * Fault e (issue 3): a Cassandra restart during a send loop. While it is down, sends are either
 * refused with the typed, retryable protocol error OVERLOADED (storage unavailable) or held and answered
 * once it is back; clients resend with the same appinfo. Nothing acknowledged is lost or doubled,
 * no seq goes back, tailers skip nothing. Cassandra is back up when the test ends, pass or fail.
 */
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { formatCounts, ZERO } from './support/audit.ts';
import { formatErrors } from './support/clients.ts';
import { Cluster } from './support/cluster.ts';
import { ensureUp, probeAll, probeCassandra, requireServices, servicesSh, waitUntilUp } from './support/services.ts';
import { acksBetween, failedAttempts, heldAcross, startTraffic } from './support/traffic.ts';

/**
 * What a client may be told while the store is away: retryable, never a verdict on the request.
 * Not INTERNAL: the CQL adapter maps an unreachable or timed-out node to OVERLOADED (storeError).
 */
const OUTAGE_CODES = new Set(['OVERLOADED']);

if (requireServices(await probeAll(), 'fault e: Cassandra restart')) {
  describe('fault e: Cassandra restart during a send loop', () => {
    let cluster: Cluster | undefined;
    afterAll(async () => {
      await ensureUp('cassandra'); // later suites need it, whatever happened here
      await cluster?.close();
    }, 300_000);

    it('sends are refused with a typed error or held; nothing acknowledged is lost', async () => {
      cluster = await Cluster.start({ workers: 2, gateways: 2 });
      onTestFailed(() => {
        if (cluster) console.log(`process logs:\n${cluster.report()}`);
      });
      const c = cluster;
      // The client waits longer than the gateway's own deadline for a shard owner (20 s), so
      // every attempt ends in an answer: an ack or a typed error, never silence.
      const traffic = await startTraffic(c, { senders: 3, recipients: 3, groupMembers: 3, timeoutMs: 30_000 });
      let stopAt = 0;
      let downAt = 0;
      let upAt = 0;
      try {
        await traffic.advance(60, 30_000, 'sends flowing before the restart');
        stopAt = Date.now();
        await servicesSh('stop', 'cassandra');
        downAt = Date.now();
        await new Promise((r) => setTimeout(r, 3000));
        await servicesSh('start', 'cassandra');
        await waitUntilUp(probeCassandra, 180_000);
        upAt = Date.now();
        await traffic.advance(60, 120_000, 'sends flowing after the restart');
      } finally {
        await ensureUp('cassandra');
      }
      const { stats, counts } = await traffic.finish(120_000);
      const resumedAt = stats.acks.find((a) => a.at > upAt)?.at ?? Number.NaN;
      console.log(
        `fault e: acks=${stats.acks.length} (before ${acksBetween(stats, 0, stopAt)}, while stopping/down ${acksBetween(stats, stopAt, upAt)}, ` +
          `after restart ${acksBetween(stats, upAt)}) errors: ${formatErrors(stats.errors)} timeouts=${stats.timeouts} ` +
          `held across the outage=${heldAcross(stats, downAt)}; stop took ${downAt - stopAt}ms, down→answering ${upAt - downAt}ms, ` +
          `first ack ${resumedAt - upAt}ms after; ${formatCounts(counts)}`,
      );
      expect(counts).toEqual(ZERO);
      expect(acksBetween(stats, 0, stopAt)).toBeGreaterThan(0);
      expect(acksBetween(stats, upAt)).toBeGreaterThan(0);
      expect(failedAttempts(stats) + heldAcross(stats, downAt), 'the outage was felt').toBeGreaterThan(0);
      expect(
        [...stats.errors.keys()].filter((code) => !OUTAGE_CODES.has(code)),
        'only typed, retryable errors',
      ).toEqual([]);
      expect(stats.timeouts, 'no attempt went unanswered').toBe(0);
    }, 300_000);
  });
}
