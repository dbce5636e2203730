/**
 * Push of read-fanout group messages to members (the `notify.huge` jobs). Storage is already
 * done — the message is one copy in the group stream — so this is the only per-member work of
 * a huge-group message, and it writes nothing: it publishes on the push bus (local in
 * embedded mode, NATS subjects per user in distributed mode), one chunk of members at a time.
 */
import {
  canReadGseq,
  inboxKey,
  readsWholeGseqRange,
  type Entry,
  type GroupKey,
  type InboxKey,
  type Membership,
  type PushBus,
  type PushMessage,
} from '@seqline/core';
import type { MessagingEnv, MessagingStores } from './deps.ts';
import type { NotifyJob } from './queues.ts';

/** A huge-group push reads the members' windows and publishes; it stores nothing. */
export type NotifyDeps = { stores: Pick<MessagingStores, 'groups'>; push: PushBus; env: Pick<MessagingEnv, 'logger'> };

export interface NotifyOptions {
  /** Members pushed to between two yields to the event loop. */
  chunkSize: number;
}

/** Consecutive stream entries: a push lists every entry in (prev, last]. */
interface Run {
  prev: number;
  entries: Entry[];
}

/** Jobs of one group → runs of consecutive gseqs (a merged batch becomes one push per run). */
export function runsOf(jobs: readonly NotifyJob[]): Run[] {
  const byGseq = new Map<number, NotifyJob>();
  for (const j of jobs) byGseq.set(j.entry.seq, j);
  const runs: Run[] = [];
  for (const j of [...byGseq.values()].sort((a, b) => a.entry.seq - b.entry.seq)) {
    const last = runs.at(-1);
    if (last && last.entries.at(-1)?.seq === j.prevGseq) last.entries.push(j.entry);
    else runs.push({ prev: j.prevGseq, entries: [j.entry] });
  }
  return runs;
}

/**
 * The part of a run this member may read (I5: within its windows), as runs again: a member who
 * joined in the middle of a run gets the tail, with the gseq before it as prev.
 */
export function visibleRuns(m: Membership | null, run: Run): Run[] {
  const out: Run[] = [];
  let prev = run.prev;
  let current: Run | undefined;
  for (const e of run.entries) {
    if (canReadGseq(m, e.seq)) {
      if (!current) out.push((current = { prev, entries: [] }));
      current.entries.push(e);
    } else {
      current = undefined;
    }
    prev = e.seq;
  }
  return out;
}

/** Publishes every run to every current member allowed to read it; returns pushes published. */
export async function runGroupNotify(d: NotifyDeps, jobs: readonly NotifyJob[], o: NotifyOptions): Promise<number> {
  const first = jobs[0];
  if (!first) return 0;
  const key = first.groupKey as GroupKey;
  const runs = runsOf(jobs);
  // The send that enqueued this is answered first: its reply must not queue behind 10 000 pushes.
  await yieldToLoop();
  // One read of every member's windows (one cached value in distributed mode), not one per member:
  // a 2 000-member group's lookups were most of a worker's CPU at 40 messages a second.
  const members = await d.stores.groups.listMemberships(key);
  let pushes = 0;
  for (let i = 0; i < members.length; i += o.chunkSize) {
    const chunk = members.slice(i, i + o.chunkSize);
    for (const run of runs) {
      // Nearly every member may read the whole run: one push, encoded once, to all of them.
      const whole: InboxKey[] = [];
      const firstGseq = run.entries[0]?.seq ?? 0;
      const lastGseq = run.entries.at(-1)?.seq ?? 0;
      for (const membership of chunk) {
        const inbox = inboxKey(first.tenant, membership.user);
        // The common case, without building runs: a member of long standing reads all of it.
        if (readsWholeGseqRange(membership, firstGseq, lastGseq)) {
          whole.push(inbox);
          continue;
        }
        for (const part of visibleRuns(membership, run)) {
          if (part.entries.length === run.entries.length) whole.push(inbox);
          else pushes += publish(d, [inbox], { prevSeq: part.prev, entries: part.entries, group: first.group });
        }
      }
      pushes += publish(d, whole, { prevSeq: run.prev, entries: run.entries, group: first.group });
    }
    // Let sockets and other requests run between chunks: a 10 000-member push must not stall the loop.
    await yieldToLoop();
  }
  return pushes;
}

/** Pushes published (best effort: the message is durable in the stream, a member that misses it pages). */
function publish(d: Pick<NotifyDeps, 'push' | 'env'>, inboxes: InboxKey[], msg: Omit<PushMessage, 'inbox'>): number {
  if (inboxes.length === 0) return 0;
  try {
    d.push.publishToEach({ inboxes, msg });
    return inboxes.length;
  } catch (err) {
    d.env.logger.warn({ members: inboxes.length, group: msg.group, err }, 'group push publish failed');
    return 0;
  }
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
