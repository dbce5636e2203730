import {
  buildReadEntry, buildRecallEntry, checkRecall, clampLimit, groupKey, inboxKey, NotFoundError,
  pageOf, readTargets, type Entry,
} from '@seqline/core';
import type { Caller, HistoryResult, SyncResult } from './api.ts';
import type { MessagingDeps } from './deps.ts';
import { FANOUT_QUEUE, RECEIPT_QUEUE, toJson, type FanoutJob, type ReceiptJob } from './jobs.ts';
import { listGroupNews } from './group-news.ts';

export async function sync(d: MessagingDeps, caller: Caller, maxSeq: number, limit?: number): Promise<SyncResult> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const n = clampLimit(limit);
  const rows = await d.timeline.readAfter(inbox, Math.max(0, maxSeq), n + 1);
  const { items, hasMore } = pageOf(rows, n);
  // Read after the rows so headSeq >= every returned seq.
  const headSeq = Math.max(await d.timeline.headSeq(inbox), items.at(-1)?.seq ?? 0);
  return { entries: items, headSeq, hasMore, groups: await listGroupNews(d, caller) };
}

/** Backward paging; beforeSeq <= 0 means "from the newest". */
export async function history(d: MessagingDeps, caller: Caller, beforeSeq: number, limit?: number): Promise<HistoryResult> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const n = clampLimit(limit);
  const before = beforeSeq > 0 ? beforeSeq : Number.MAX_SAFE_INTEGER;
  const { items, hasMore } = pageOf(await d.timeline.readBefore(inbox, before, n + 1), n);
  return { entries: items, hasMore };
}

/**
 * Read: a `read` entry lands in the reader's inbox at once (so the reader's other devices
 * learn it by sync); each sender's `receipt` follows through the receipt queue, serialized
 * and merged by the sender's inbox owner.
 */
export async function read(d: MessagingDeps, caller: Caller, seqs: number[]): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const found: Entry[] = [];
  for (const s of new Set(seqs)) {
    const e = await d.timeline.getEntry(inbox, s);
    if (e) found.push(e);
  }
  if (found.length === 0) throw new NotFoundError('none of these seqs is in your inbox');
  const entry = buildReadEntry(caller.user, found.map((e) => e.seq), d.clock.now(), `read:${d.newId()}`);
  const [outcome] = await d.writer.append(inbox, [entry]);
  if (!outcome) throw new Error('append returned no outcome');
  for (const t of readTargets(found, caller.user)) {
    const job: ReceiptJob = { tenant: caller.tenant, sender: t.senderUser, appinfo: t.appinfo, readers: [caller.user] };
    await d.queue.enqueue(RECEIPT_QUEUE, `receipt:${caller.tenant}:${t.senderUser}:${t.appinfo}:${caller.user}`, toJson(job));
  }
  return { seq: outcome.seq };
}

/** Recall: a `recall` entry in the caller's inbox now, then in every other copy's inbox. */
export async function recall(d: MessagingDeps, caller: Caller, appinfo: string): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const seq = (await d.timeline.findSeqs(inbox, [appinfo])).get(appinfo);
  const message = seq === undefined ? null : await d.timeline.getEntry(inbox, seq);
  let isGroupAdmin = false;
  let gkey: ReturnType<typeof groupKey> | undefined;
  if (message?.conv.type === 'group') {
    gkey = groupKey(caller.tenant, message.conv.id);
    isGroupAdmin = (await d.groups.getGroup(gkey))?.admin === caller.user;
  }
  checkRecall({ caller: caller.user, message, isGroupAdmin, now: d.clock.now() });
  if (!message) throw new NotFoundError('message not found');
  const entry = buildRecallEntry(message, caller.user, d.clock.now());
  const [outcome] = await d.writer.append(inbox, [entry]);
  if (!outcome) throw new Error('append returned no outcome');

  const others = gkey
    ? (await d.groups.listMembers(gkey)).filter((m) => m !== caller.user)
    : [message.conv.id].filter((m) => m !== caller.user);
  if (others.length > 0) {
    // The recall entry's conv is the caller's view; runFanout re-derives each recipient's view
    // for 1:1 from `from`, which must then be the other party of the original conversation.
    const fan: FanoutJob = {
      tenant: caller.tenant, entry, recipients: others, ...(gkey ? { groupKey: gkey } : {}),
    };
    await d.queue.enqueue(FANOUT_QUEUE, `recall:${caller.tenant}:${appinfo}`, toJson(fan));
  }
  return { seq: outcome.seq };
}
