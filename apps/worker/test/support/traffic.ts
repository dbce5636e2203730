/**
 * The traffic every service-fault test runs: 1:1 senders to a few recipients (and optionally a
 * small group), tailers on every inbox involved, and the audit at the end.
 */
import { TestClient, waitFor } from '../../../server/test/harness.ts';
import { collectInboxes, InboxAudit, type Counts } from './audit.ts';
import { explainLost } from './diagnose.ts';
import { httpHeadSeq, httpSyncAll, mergeStats, sendLoop, tailInbox, type SendStats, type Tail } from './clients.ts';
import type { Cluster } from './cluster.ts';

export interface TrafficOptions {
  senders: number;
  recipients: number;
  /** Members of a small group (besides the senders) that the senders also write to; 0 = none. */
  groupMembers?: number;
  /** Client timeout per attempt (default 8 s). */
  timeoutMs?: number;
}

export interface Traffic {
  senders: string[];
  recipients: string[];
  group?: { id: string; members: string[] };
  tails: Tail[];
  /** Entries tailed so far, over every tailer: the progress meter. */
  progress(): number;
  /** Waits until `n` more entries were tailed than now. */
  advance(n: number, timeoutMs: number, what: string): Promise<void>;
  /** Stops sending and tailing, waits for every acknowledged message to arrive, audits. */
  finish(deliveryTimeoutMs?: number): Promise<{ stats: SendStats; counts: Counts }>;
}

export async function startTraffic(c: Cluster, o: TrafficOptions): Promise<Traffic> {
  const urls = c.gateways.map((g) => g.url);
  const senders = Array.from({ length: o.senders }, (_, i) => `snd${i}`);
  const recipients = Array.from({ length: o.recipients }, (_, i) => `rcpt${i}`);
  let group: Traffic['group'];
  if (o.groupMembers) {
    const members = Array.from({ length: o.groupMembers }, (_, i) => `gm${i}`);
    const admin = await TestClient.connect(urls[0]!, senders[0]!, c.tenant);
    try {
      const g = await waitFor(
        async () => {
          const r = await admin.call('group.create', { name: 'fault-group', members: [...senders.slice(1), ...members] });
          return r.ok ? r : undefined;
        },
        30_000,
        'group.create',
      );
      group = { id: g.group as string, members: [...senders, ...members] };
    } finally {
      admin.close();
    }
  }
  let stop = false;
  const tailed = [...new Set([...recipients, ...senders, ...(group?.members ?? [])])];
  const tails = tailed.map((u, i) => tailInbox(i % 2 ? [...urls].reverse() : urls, c.tenant, u, () => stop));
  const loops = senders.map((user, i) =>
    sendLoop({
      urls: i % 2 ? [...urls].reverse() : urls,
      tenant: c.tenant,
      user,
      stop: () => stop,
      timeoutMs: o.timeoutMs ?? 8000,
      // Every 4th send of a sender goes to the group, when there is one.
      target: (k) => (group && k % 4 === 3 ? { group: group.id } : { user: recipients[(k + i) % recipients.length]! }),
    }),
  );
  const progress = () => tails.reduce((n, t) => n + t.seen.length, 0);

  return {
    senders,
    recipients,
    ...(group ? { group } : {}),
    tails,
    progress,
    async advance(n, timeoutMs, what) {
      const from = progress();
      await waitFor(() => progress() >= from + n, timeoutMs, what);
    },
    async finish(deliveryTimeoutMs = 60_000) {
      stop = true;
      const all = await Promise.all(loops);
      await Promise.all(tails.map((t) => t.done));
      const audit = new InboxAudit();
      senders.forEach((user, i) => {
        const acks = all[i]!.acks;
        audit.sender(user, acks);
        for (const a of acks) {
          if ('user' in a.to) audit.expect(a.to.user, a.appinfo);
          else for (const m of group?.members ?? []) audit.expect(m, a.appinfo);
        }
      });
      const inboxes = await collectInboxes(audit, (u) => httpSyncAll(c.gateways[0]!.httpUrl, c.tenant, u), deliveryTimeoutMs);
      const counts = audit.check(inboxes, tails);
      const explained = await explainLost(c.tenant, audit.lostPairs, (u) => httpHeadSeq(c.gateways[0]!.httpUrl, c.tenant, u));
      for (const line of [...explained.map((l) => `LOST ${l}`), ...audit.details.slice(0, 30)]) console.log(line);
      return { stats: mergeStats(all), counts };
    },
  };
}

/** Sends whose first attempt began before `t` and whose ack came after `t + minMs`: held across a fault. */
export function heldAcross(stats: SendStats, t: number, minMs = 500): number {
  return stats.acks.filter((a) => a.sentAt < t && a.at > t + minMs).length;
}

/** Attempts that failed (error reply or client timeout) and were resent. */
export function failedAttempts(stats: SendStats): number {
  return stats.timeouts + [...stats.errors.values()].reduce((n, k) => n + k, 0);
}

/** Acks in a time window. */
export function acksBetween(stats: SendStats, from: number, to = Number.POSITIVE_INFINITY): number {
  return stats.acks.filter((a) => a.at >= from && a.at < to).length;
}
