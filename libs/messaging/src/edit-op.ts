/**
 * `edit` (v1.1): new content for a message, by its sender only, within recall's window. Like a
 * recall, an `edit` control entry goes into the caller's inbox at once, then wherever the
 * message went: every other copy's inbox (write-fanout, through the durable fanout queue) or
 * the group stream (read-fanout). The message itself is never rewritten; readers of the index
 * see its latest edit (core's withLatestEdit).
 */
import {
  buildEditEntry,
  checkRecall,
  ForbiddenError,
  groupKey,
  inboxKey,
  InternalError,
  NotFoundError,
  RecallExpiredError,
  recallAppinfo,
  wasMemberAt,
  type Entry,
  type InboxKey,
  type NewEntry,
} from '@seqline/core';
import type { Caller, EditInput } from './api.ts';
import type { MessagingEnv, MessagingStores, MessagingWriters } from './deps.ts';
import { fanoutQueueFor, toJson, type FanoutJob } from './queues.ts';
import { enqueueCopies, streamCopyHolders } from './mentions.ts';
import { appendToStream, type StreamAppendDeps } from './send.ts';

export type EditDeps = StreamAppendDeps & {
  stores: Pick<MessagingStores, 'timeline' | 'groups' | 'groupStreams'>;
  writers: Pick<MessagingWriters, 'inbox'>;
  env: Pick<MessagingEnv, 'clock' | 'newId'>;
};

export async function edit(d: EditDeps, caller: Caller, input: EditInput): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const message = await ownCopy(d, inbox, input.appinfo);
  const now = d.env.clock.now();
  checkEditable(caller.user, message, now);
  if (await wasRecalled(d, inbox, message.appinfo)) throw new NotFoundError('edit: the message was recalled');

  // One appinfo for every copy of this edit, so a retried fanout job dedups in each inbox.
  const entry = buildEditEntry(caller.user, message, input, now, `edit:${d.env.newId()}`);
  const [outcome] = await d.writers.inbox.append(inbox, [entry]);
  if (!outcome) throw new InternalError('append returned no outcome');
  await followMessage(d, caller, message, entry);
  return { seq: outcome.seq };
}

/** The caller's copy of the message (a sender always has one, read-fanout included). */
async function ownCopy(d: Pick<EditDeps, 'stores'>, inbox: InboxKey, appinfo: string): Promise<Entry | null> {
  const seq = (await d.stores.timeline.findSeqs(inbox, [appinfo])).get(appinfo);
  return seq === undefined ? null : d.stores.timeline.getEntry(inbox, seq);
}

/**
 * Recall's rule from core, with no admin powers (only the sender edits): NOT_FOUND, then
 * FORBIDDEN, then the window (RECALL_EXPIRED, the same 24 h).
 */
function checkEditable(caller: string, message: Entry | null, now: number): asserts message is Entry {
  try {
    checkRecall({ caller, message, isGroupAdmin: false, now });
  } catch (err) {
    if (err instanceof RecallExpiredError) throw new RecallExpiredError('edit window (24 h) has passed');
    if (err instanceof ForbiddenError) throw new ForbiddenError('only the sender may edit this message');
    throw err;
  }
}

async function wasRecalled(d: Pick<EditDeps, 'stores'>, inbox: InboxKey, appinfo: string): Promise<boolean> {
  const marker = recallAppinfo(appinfo);
  return (await d.stores.timeline.findSeqs(inbox, [marker])).has(marker);
}

/**
 * Where the message went, the edit goes: the group stream when it is there; else the inboxes
 * of those who got a copy — the 1:1 peer, or the group's members at the message's sendTime.
 */
async function followMessage(d: EditDeps, caller: Caller, message: Entry, entry: NewEntry): Promise<void> {
  const { tenant } = caller;
  if (message.conv.type === 'group') {
    const key = groupKey(tenant, message.conv.id);
    if ((await d.stores.groupStreams.findSeqs(key, [message.appinfo])).has(message.appinfo)) {
      await appendToStream(d, tenant, key, message.conv.id, entry);
      // The members it names hold a copy in their inboxes (mentions.ts): the edit goes there too.
      const holders = streamCopyHolders(message).filter((u) => u !== caller.user);
      if (holders.length > 0) {
        const group = await d.stores.groups.getGroup(key);
        await enqueueCopies(d, tenant, group, entry, holders, `edit-copies:${tenant}:${entry.appinfo}`);
      }
      return;
    }
    const group = await d.stores.groups.getGroup(key);
    const recipients = (await d.stores.groups.listMemberships(key))
      .filter((m) => m.user !== caller.user && wasMemberAt(m, message.sendTime))
      .map((m) => m.user);
    if (recipients.length === 0) return;
    const job: FanoutJob = { tenant, entry, recipients, groupKey: key };
    await d.queue.enqueue(fanoutQueueFor(group?.tier), `edit:${tenant}:${entry.appinfo}`, toJson(job));
    return;
  }
  if (message.conv.id === caller.user) return; // a note to self has one copy
  // runMergedFanout gives the peer's copy conv = `from` (the sender, who is the editor).
  const job: FanoutJob = { tenant, entry, recipients: [message.conv.id] };
  await d.queue.enqueue(fanoutQueueFor(undefined), `edit:${tenant}:${entry.appinfo}`, toJson(job));
}
