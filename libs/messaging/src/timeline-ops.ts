import {
  actsAsGroupAdmin,
  buildReadEntry,
  buildRecallEntry,
  checkRecall,
  clampLimit,
  groupKey,
  holdersBesides,
  inboxKey,
  messageKey,
  NotFoundError,
  readAppinfo,
  readTargets,
  recallCopiesJobId,
  recallJobId,
  receiptJobId,
  type DedupKey,
  type Entry,
  type GroupRecord,
  type MessageRoute,
  type WorkQueue,
} from '@seqline/core';
import type { Caller, HistoryResult, SyncResult } from './api.ts';
import type { MessagingEnv, MessagingStores, MessagingWriters } from './deps.ts';
import { listGroupNews } from './group-news.ts';
import { enqueueCopies } from './mentions.ts';
import { groupRouteOf } from './copy-routes.ts';
import { fanoutQueueFor, RECEIPT_QUEUE, toJson, type FanoutJob, type ReceiptJob } from './queues.ts';
import { appendToStream, type StreamAppendDeps } from './send.ts';
import { syncConvs, type SyncConvsDeps } from './sync-convs.ts';
import { visibleAfter, visibleBefore, type VisibleReadDeps } from './visible-timeline.ts';

/** A read: the reader's inbox, its `read` entry, one receipt job per sender. */
export type ReadDeps = {
  stores: Pick<MessagingStores, 'timeline'>;
  writers: Pick<MessagingWriters, 'inbox'>;
  queue: WorkQueue;
  env: Pick<MessagingEnv, 'clock' | 'newId'>;
};

/** A recall follows the message: into inboxes (fanout job) or into the group stream. */
export type RecallDeps = StreamAppendDeps & {
  stores: MessagingStores;
  writers: Pick<MessagingWriters, 'inbox'>;
  env: Pick<MessagingEnv, 'clock'>;
};

/**
 * Sync: the entries after maxSeq the owner still sees (deleted and cleared ones are skipped,
 * see visibleAfter), the read-fanout groups with news, and the conversations touched,
 * each at or past its entries (sync-convs.ts: waited for within a bound, else named pending).
 */
export async function sync(d: SyncConvsDeps, caller: Caller, maxSeq: number, limit?: number): Promise<SyncResult> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const n = clampLimit(limit);
  // Independent reads, in parallel (a cache miss would otherwise chain them). A head read
  // before an append the rows include is raised to the last returned seq.
  const [{ items, hasMore }, head, groups] = await Promise.all([
    visibleAfter(d, inbox, Math.max(0, maxSeq), n),
    d.stores.timeline.headSeq(inbox),
    listGroupNews(d, caller),
  ]);
  const headSeq = Math.max(head, items.at(-1)?.seq ?? 0);
  const { convs, pending } = await syncConvs(d, caller, inbox, items, groups);
  return { entries: items, headSeq, hasMore, groups, convs, ...(pending.length > 0 && { convsPending: pending }) };
}

/** Backward paging over the entries the owner still sees; beforeSeq <= 0 means "from the newest". */
export async function history(d: VisibleReadDeps, caller: Caller, beforeSeq: number, limit?: number): Promise<HistoryResult> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const n = clampLimit(limit);
  const before = beforeSeq > 0 ? beforeSeq : Number.MAX_SAFE_INTEGER;
  const { items, hasMore } = await visibleBefore(d, inbox, before, n);
  return { entries: items, hasMore };
}

/**
 * Read: a `read` entry lands in the reader's inbox at once (so the reader's other devices
 * learn it by sync); each sender's `receipt` follows through the receipt queue, serialized
 * and merged by the sender's inbox owner.
 */
export async function read(d: ReadDeps, caller: Caller, seqs: number[]): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const found: Entry[] = [];
  for (const s of new Set(seqs)) {
    const e = await d.stores.timeline.getEntry({ inbox, seq: s });
    if (e) found.push(e);
  }
  if (found.length === 0) throw new NotFoundError('none of these seqs is in your inbox');
  const entry = buildReadEntry(
    caller.user,
    found.map((e) => e.seq),
    d.env.clock.now(),
    readAppinfo({ reader: caller.user, made: d.env.newId() }),
  );
  const [outcome] = await d.writers.inbox.append({ inbox, entries: [entry] });
  if (!outcome) throw new Error('append returned no outcome');
  for (const t of readTargets(found, caller.user)) {
    const job: ReceiptJob = { tenant: caller.tenant, sender: t.senderUser, appinfo: t.appinfo, readers: [caller.user] };
    const id = receiptJobId({ tenant: caller.tenant, sender: t.senderUser, appinfo: t.appinfo, reader: caller.user });
    await d.queue.enqueue({ queue: RECEIPT_QUEUE, id, payload: toJson(job) });
  }
  return { seq: outcome.seq };
}

/**
 * Recall: a `recall` entry in the caller's inbox now, then wherever the message went — into
 * every other copy's inbox for write-fanout, or one entry into the group stream for
 * read-fanout (found by looking the appinfo up in the stream: the recall follows the message,
 * whatever the group's tier is now). A group admin recalling a read-fanout message has no
 * copy of it in their inbox; it is found in the streams of the groups they administer.
 * Appinfos are unique per sender: `sender` names whose message (the caller's own by default;
 * a group admin names the member).
 */
export async function recall(d: RecallDeps, caller: Caller, appinfo: string, sender = caller.user): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const key = messageKey(sender, appinfo);
  const seq = (await d.stores.timeline.findSeqs({ inbox, keys: [key] })).get(key);
  let message = seq === undefined ? null : await d.stores.timeline.getEntry({ inbox, seq });
  message ??= await findInAdministeredStreams(d, caller, key);
  let group: GroupRecord | null = null;
  if (message?.conv.type === 'group') group = await d.stores.groups.getGroup(groupKey(caller.tenant, message.conv.id));
  // Admin rights as they are now: an admin who left the group recalls nothing but their own.
  const isGroupAdmin =
    group !== null &&
    actsAsGroupAdmin(group.admin, caller.user, await d.stores.groups.getMembership({ key: group.key, user: caller.user }));
  checkRecall({ caller: caller.user, message, isGroupAdmin, now: d.env.clock.now() });
  if (!message) throw new NotFoundError('message not found');
  const entry = buildRecallEntry(message, caller.user, d.env.clock.now());
  const [outcome] = await d.writers.inbox.append({ inbox, entries: [entry] });
  if (!outcome) throw new Error('append returned no outcome');

  // Exactly the inboxes holding a copy (core's copy-holders.ts), whatever the group is now.
  const route: MessageRoute = group ? await groupRouteOf(d, group.key, message) : { way: 'direct' };
  const holders = holdersBesides(message, route, caller.user);
  if (group && route.way === 'stream') {
    await appendToStream(d, caller.tenant, group.key, group.id, entry);
    const copiesId = recallCopiesJobId({ tenant: caller.tenant, sender: message.from, appinfo });
    await enqueueCopies(d, caller.tenant, group, entry, holders, copiesId);
    return { seq: outcome.seq };
  }
  if (holders.length > 0) {
    // The recall entry's conv is the caller's view; runMergedFanout re-derives each recipient's
    // view for 1:1 from `from`, which must then be the other party of the original conversation.
    const fan: FanoutJob = {
      tenant: caller.tenant,
      entry,
      recipients: holders,
      ...(group ? { groupKey: group.key } : {}),
    };
    await d.queue.enqueue({
      queue: fanoutQueueFor(group?.tier),
      id: recallJobId({ tenant: caller.tenant, sender: message.from, appinfo }),
      payload: toJson(fan),
    });
  }
  return { seq: outcome.seq };
}

async function findInAdministeredStreams(
  d: { stores: Pick<MessagingStores, 'groups' | 'groupStreams'> },
  caller: Caller,
  message: DedupKey,
): Promise<Entry | null> {
  const keys = await d.stores.groups.groupsOf(inboxKey(caller.tenant, caller.user));
  const found = await Promise.all(
    keys.map(async (key) => {
      const gseq = (await d.stores.groupStreams.findSeqs({ group: key, keys: [message] })).get(message);
      if (gseq === undefined) return null;
      const admin = (await d.stores.groups.getGroup(key))?.admin;
      if (!actsAsGroupAdmin(admin, caller.user, await d.stores.groups.getMembership({ key, user: caller.user }))) return null;
      const [row] = await d.stores.groupStreams.readAfter({ group: key, afterGseq: gseq - 1, limit: 1 });
      return row?.seq === gseq ? row : null;
    }),
  );
  return found.find((e) => e !== null) ?? null;
}
