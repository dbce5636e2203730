/**
 * Fault b (issue 3): SIGSTOP a shard owner past its lease, let the other worker take its shards
 * over, SIGCONT it. Senders keep sending through the takeover (resending the same appinfo on an
 * error or a timeout, like the SDK) and clients tail the paused owner's inboxes by max seq.
 * No seq is reused, none goes back, no tailer skips anything, nothing acknowledged is lost.
 */
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { inboxKey, shardOf } from '@seqline/core';
import { waitFor } from '../../server/test/harness.ts';
import { collectInboxes, formatCounts, InboxAudit, ZERO } from './support/audit.ts';
import { explainLost } from './support/diagnose.ts';
import { formatErrors, httpHeadSeq, httpSyncAll, mergeStats, sendLoop, sleep, tailInbox, type SendStats } from './support/clients.ts';
import { Cluster, SHARDS, type NodeProcess } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

const RECIPIENTS = Number(process.env.FAULT_B_RECIPIENTS ?? 3);
const SENDERS_ON_PAUSED = Number(process.env.FAULT_B_SENDERS ?? 2);
const SENDERS_ELSEWHERE = 1;
/** Pause between a sender's acknowledged sends: low, so the owner is mid-append when stopped. */
const SEND_PAUSE_MS = Number(process.env.FAULT_B_SEND_PAUSE_MS ?? 30);

/** `count` user ids (with `prefix`) whose inbox shard `pick` accepts. */
function usersWhere(tenant: string, prefix: string, count: number, pick: (shard: number) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count && i < 100_000; i++) {
    const user = `${prefix}${i}`;
    if (pick(shardOf(inboxKey(tenant, user), SHARDS))) out.push(user);
  }
  return out;
}

if (requireServices(await probeAll(), 'fault b: SIGSTOP a shard owner past its lease')) {
  describe('fault b: SIGSTOP a shard owner past its lease, takeover, SIGCONT', () => {
    let cluster: Cluster | undefined;
    let paused: NodeProcess | undefined;
    afterAll(async () => {
      paused?.sigcont();
      await cluster?.close();
    }, 60_000);

    it('no seq reused or going back, tailers skip nothing, sends continue through the takeover', async () => {
      cluster = await Cluster.start({ workers: 2, gateways: 2 });
      onTestFailed(() => {
        if (cluster) console.log(`process logs:\n${cluster.report()}`);
      });
      const c = cluster;
      const [victim, other] = c.workers as [NodeProcess, NodeProcess];
      const onVictim = (shard: number) => victim.serving.has(shard);
      const recipients = usersWhere(c.tenant, 'rcpt', RECIPIENTS, onVictim);
      const senders = [
        ...usersWhere(c.tenant, 'snd', SENDERS_ON_PAUSED, onVictim),
        ...usersWhere(c.tenant, 'oth', SENDERS_ELSEWHERE, (s) => other.serving.has(s)),
      ];
      const targetShards = [
        ...new Set([...recipients, ...senders.slice(0, SENDERS_ON_PAUSED)].map((u) => shardOf(inboxKey(c.tenant, u), SHARDS))),
      ];
      const urls = c.gateways.map((g) => g.url);

      let stop = false;
      const tails = [...recipients, ...senders.slice(0, SENDERS_ON_PAUSED)].map((u) =>
        tailInbox([...urls].reverse(), c.tenant, u, () => stop),
      );
      const loops: Promise<SendStats>[] = senders.map((user, i) =>
        sendLoop({
          urls,
          tenant: c.tenant,
          user,
          stop: () => stop,
          pauseMs: SEND_PAUSE_MS,
          target: (k) => ({ user: recipients[(k + i) % recipients.length]! }),
        }),
      );
      const progress = () => tails.reduce((n, t) => n + t.seen.length, 0);

      await waitFor(() => progress() > 30, 30_000, 'sends flowing before the pause');
      const stoppedAt = Date.now();
      victim.sigstop();
      paused = victim;
      // Hold the pause until the other worker serves every target shard and sends went through it.
      const seenAtStop = progress();
      await waitFor(() => targetShards.every((s) => other.serving.has(s)), 30_000, "the takeover of the paused owner's shards");
      const takeoverMs = Date.now() - stoppedAt;
      await waitFor(() => progress() > seenAtStop + 30, 30_000, 'sends through the new owner');
      await sleep(1000);
      victim.sigcont();
      paused = undefined;
      const contAt = Date.now();
      const pauseMs = contAt - stoppedAt;
      // Run on through the woken owner's self-fence and the rebalancing that may follow.
      await sleep(4 * c.leaseTtlMs);
      await waitFor(() => progress() > seenAtStop + 60, 30_000, 'sends after the wake-up');
      stop = true;
      const all = await Promise.all(loops);
      const stats = mergeStats(all);
      await Promise.all(tails.map((t) => t.done));

      const audit = new InboxAudit();
      senders.forEach((user, i) => {
        const acks = all[i]!.acks;
        audit.sender(user, acks);
        for (const a of acks) if ('user' in a.to) audit.expect(a.to.user, a.appinfo);
      });
      const inboxes = await collectInboxes(audit, (u) => httpSyncAll(c.gateways[0]!.httpUrl, c.tenant, u), 60_000);
      const counts = audit.check(inboxes, tails);
      const lostLines = await explainLost(c.tenant, audit.lostPairs, (u) => httpHeadSeq(c.gateways[0]!.httpUrl, c.tenant, u));
      for (const line of [...lostLines.map((l) => `LOST ${l}`), ...audit.details.slice(0, 30)]) console.log(`fault b: ${line}`);

      const duringPause = stats.acks.filter((a) => a.at > stoppedAt && a.at < contAt).length;
      const dropped = targetShards.filter((s) =>
        victim.records.some((r) => r.time > stoppedAt && r.shard === s && (r.msg === 'dropping shard' || r.msg === 'shard lease lost')),
      );
      const epochs = targetShards.map((s) => other.logged('serving shard', s).map((r) => r.epoch));
      console.log(
        `fault b: pause=${pauseMs}ms takeover=${takeoverMs}ms acks=${stats.acks.length} (during pause ${duringPause}) ` +
          `errors: ${formatErrors(stats.errors)} timeouts=${stats.timeouts} tailed=${progress()} ${formatCounts(counts)} ` +
          `woken owner dropped ${dropped.length}/${targetShards.length} target shards; new owner epochs ${JSON.stringify(epochs)}`,
      );
      expect(counts).toEqual(ZERO);
      expect(pauseMs).toBeGreaterThan(c.leaseTtlMs);
      expect(duringPause, 'sends were acknowledged while the old owner was paused').toBeGreaterThan(0);
      expect(stats.acks.filter((a) => a.at > contAt).length, 'and after it woke up').toBeGreaterThan(0);
      expect(dropped, 'the woken owner gave up the shards it had lost').toEqual(targetShards);
    }, 240_000);
  });
}
