/**
 * The fault tests' verdict: from the final inboxes, what was acknowledged, and what tailers and
 * senders saw, count lost, duplicated, reused seqs, seq regressions and sync skips (I1–I3).
 */
import { findSkips, isStrictlyIncreasing } from '@seqline/core';
import type { WireEntry } from '../../../server/test/harness.ts';
import type { Ack, Tail } from './clients.ts';

export interface Counts {
  /** Acknowledged messages missing from an inbox that must hold them. */
  lost: number;
  /** Extra copies of one message in one inbox. */
  duplicated: number;
  /** An acknowledged seq whose entry is another message (a seq handed out twice). */
  reused: number;
  /** A seq that went back: an inbox or a tail not strictly increasing, or a sender's later ack below an earlier one. */
  regressions: number;
  /** Entries of an inbox that its tailing client never received. */
  skips: number;
}

export class InboxAudit {
  /** user → appinfos its inbox must hold exactly once. */
  private readonly expected = new Map<string, Set<string>>();
  private readonly senders = new Map<string, Ack[]>();
  /** `user appinfo` of every lost message (for the failure report). */
  readonly lostPairs: string[] = [];
  /** What else went wrong, one line each (duplicates with their seqs, skipped seqs, regressions). */
  readonly details: string[] = [];

  expect(user: string, appinfo: string): void {
    let set = this.expected.get(user);
    if (!set) this.expected.set(user, (set = new Set()));
    set.add(appinfo);
  }

  /** A sequential sender's acks (in order): its copies' seqs must increase and hold its messages. */
  sender(user: string, acks: Ack[]): void {
    this.senders.set(user, acks);
    for (const a of acks) this.expect(user, a.appinfo);
  }

  /** Every message this user must hold is in the inbox. */
  isComplete(user: string, inbox: WireEntry[]): boolean {
    const have = new Set(inbox.map((e) => e.appinfo));
    return [...(this.expected.get(user) ?? [])].every((a) => have.has(a));
  }

  users(): string[] {
    return [...new Set([...this.expected.keys(), ...this.senders.keys()])];
  }

  /**
   * Checks every user's final inbox. `tails` are the tailing clients; each must have seen every
   * seq of its inbox up to where it stopped (the rest it fetches now, like a client catching up).
   */
  check(inboxes: Map<string, WireEntry[]>, tails: Tail[] = []): Counts {
    const counts: Counts = { lost: 0, duplicated: 0, reused: 0, regressions: 0, skips: 0 };
    for (const [user, inbox] of inboxes) {
      const seqs = inbox.map((e) => e.seq);
      if (!isStrictlyIncreasing(seqs)) counts.regressions++;
      const copies = new Map<string, number>();
      for (const e of inbox) if (e.kind === 'msg') copies.set(e.appinfo, (copies.get(e.appinfo) ?? 0) + 1);
      for (const [appinfo, n] of copies) {
        if (n < 2) continue;
        counts.duplicated += n - 1;
        this.details.push(
          `duplicate ${user} ${appinfo} at seqs ${inbox
            .filter((e) => e.appinfo === appinfo)
            .map((e) => e.seq)
            .join(',')}`,
        );
      }
      for (const appinfo of this.expected.get(user) ?? []) {
        if (copies.has(appinfo)) continue;
        counts.lost++;
        this.lostPairs.push(`${user} ${appinfo}`);
      }
      const bySeq = new Map(inbox.map((e) => [e.seq, e]));
      let last = 0;
      for (const ack of this.senders.get(user) ?? []) {
        if (bySeq.get(ack.seq)?.appinfo !== ack.appinfo) {
          counts.reused++;
          this.details.push(`reused ${user} ack ${ack.appinfo}@${ack.seq} holds ${bySeq.get(ack.seq)?.appinfo ?? 'nothing'}`);
        }
        if (!ack.duplicate && ack.seq <= last) {
          counts.regressions++;
          this.details.push(`regression ${user} ack ${ack.appinfo}@${ack.seq} after ${last}`);
        }
        last = Math.max(last, ack.seq);
      }
    }
    for (const tail of tails) {
      const inbox = inboxes.get(tail.user) ?? [];
      const seen = tail.seen.map((e) => e.seq);
      if (!isStrictlyIncreasing(seen)) counts.regressions++;
      const upTo = seen.at(-1) ?? 0;
      const caughtUp = [...seen, ...inbox.filter((e) => e.seq > upTo).map((e) => e.seq)];
      const skipped = findSkips(
        caughtUp,
        inbox.map((e) => e.seq),
      );
      counts.skips += skipped.length;
      if (skipped.length > 0) this.details.push(`skips ${tail.user}: ${skipped.slice(0, 20).join(',')} (tail ended at ${upTo})`);
    }
    return counts;
  }
}

export const ZERO: Counts = { lost: 0, duplicated: 0, reused: 0, regressions: 0, skips: 0 };

export function formatCounts(c: Counts): string {
  return `lost=${c.lost} duplicated=${c.duplicated} reused=${c.reused} regressions=${c.regressions} skips=${c.skips}`;
}

/**
 * Polls until every expected message is in its inbox (fanout after redelivery is asynchronous),
 * then returns the inboxes; returns what is there at the deadline so the counts show the loss.
 */
export async function collectInboxes(
  audit: InboxAudit,
  fetchInbox: (user: string) => Promise<WireEntry[]>,
  timeoutMs: number,
): Promise<Map<string, WireEntry[]>> {
  const deadline = Date.now() + timeoutMs;
  const inboxes = new Map<string, WireEntry[]>();
  let pending = audit.users();
  for (;;) {
    const next: string[] = [];
    for (let i = 0; i < pending.length; i += 25) {
      const batch = pending.slice(i, i + 25);
      const got = await Promise.all(batch.map(async (u) => [u, await fetchInbox(u).catch(() => undefined)] as const));
      for (const [user, inbox] of got) {
        if (inbox) inboxes.set(user, inbox);
        if (!inbox || !audit.isComplete(user, inbox)) next.push(user);
      }
    }
    pending = next;
    if (pending.length === 0 || Date.now() > deadline) return inboxes;
    await new Promise((r) => setTimeout(r, 500));
  }
}
