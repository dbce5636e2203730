/**
 * `edit`: new content for a message, by its sender only, within recall's window. Like a
 * recall, an `edit` control entry goes into the caller's inbox at once, then wherever the
 * message went: every other copy's inbox (write-fanout, through the durable fanout queue) or
 * the group stream (read-fanout). The message itself is never rewritten; readers of the index
 * see its latest edit (core's withLatestEdit).
 */
import {
  BadRequestError,
  buildEditEntry,
  checkRecall,
  editAppinfo,
  editCopiesJobId,
  editJobId,
  EditIdTakenError,
  ForbiddenError,
  groupKey,
  holdersBesides,
  inboxKey,
  InternalError,
  isClientAppinfo,
  isSameEdit,
  messageKey,
  NotFoundError,
  RecallExpiredError,
  recallAppinfoLookups,
  serverEntryKey,
  splitKey,
  type Entry,
  type InboxKey,
  type NewEntry,
} from '@seqline/core';
import type { Caller, EditInput } from './api.ts';
import type { MessagingEnv, MessagingStores, MessagingWriters } from './deps.ts';
import { groupRouteOf } from './copy-routes.ts';
import { enqueueCopies } from './mentions.ts';
import { appendToStream, originalOf, stripSeq, type StreamAppendDeps } from './send.ts';

export type EditDeps = StreamAppendDeps & {
  stores: Pick<MessagingStores, 'timeline' | 'groups' | 'groupStreams'>;
  writers: Pick<MessagingWriters, 'inbox'>;
  env: Pick<MessagingEnv, 'clock' | 'newId'>;
};

/**
 * A client editId (the SDK sets a UUIDv7) makes the edit's appinfo the same on every attempt:
 * a retry finds the entry stored by an earlier one and redoes the fanout step, which is
 * idempotent (the fanout job and every inbox dedup by that appinfo), so a crash between the
 * append and the enqueue loses nothing. Without one, every call is a new edit.
 */
export async function edit(d: EditDeps, caller: Caller, input: EditInput): Promise<{ seq: number }> {
  if (input.editId !== undefined && !isClientAppinfo(input.editId)) {
    throw new BadRequestError("edit: editId must be 1-128 characters without ':', control characters or unpaired surrogates");
  }
  const inbox = inboxKey(caller.tenant, caller.user);
  const message = await ownCopy(d, inbox, input.appinfo);
  const now = d.env.clock.now();
  checkEditable(caller.user, message, now);
  if (await wasRecalled(d, inbox, message.appinfo)) throw new NotFoundError('edit: the message was recalled');

  // One appinfo for every copy of this edit, so a retried fanout job dedups in each inbox.
  const made = input.editId ?? d.env.newId();
  const entry = buildEditEntry(caller.user, message, input, now, editAppinfo({ editor: caller.user, made }));
  const [outcome] = await d.writers.inbox.append({ inbox, entries: [entry] });
  if (!outcome) throw new InternalError('append returned no outcome');
  const stored = outcome.duplicate ? retriedEdit(await originalOf(d, inbox, outcome), entry, made) : entry;
  await followMessage(d, caller, message, stored);
  return { seq: outcome.seq };
}

/** The edit an earlier attempt stored under this editId (its append's original): this one again, or a refusal. */
function retriedEdit(stored: Entry, sent: NewEntry, editId: string): NewEntry {
  if (!isSameEdit(stored, sent)) throw new EditIdTakenError(editId);
  return stripSeq(stored);
}

/** The caller's copy of the message (a sender always has one, read-fanout included). */
async function ownCopy(d: Pick<EditDeps, 'stores'>, inbox: InboxKey, appinfo: string): Promise<Entry | null> {
  const key = messageKey(splitKey(inbox).id, appinfo); // the caller's own message
  const seq = (await d.stores.timeline.findSeqs({ inbox, keys: [key] })).get(key);
  return seq === undefined ? null : d.stores.timeline.getEntry({ inbox, seq });
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
  // The caller is the sender (only the sender edits); markers of the previous version too.
  const markers = recallAppinfoLookups({ sender: splitKey(inbox).id, appinfo });
  return (await d.stores.timeline.findSeqs({ inbox, keys: markers.map(serverEntryKey) })).size > 0;
}

/**
 * Where the message went, the edit goes: into the group stream for a read-fanout message, and
 * into the inboxes of every other holder of a copy (core's copy-holders.ts: the 1:1 peer, the
 * snapshot its send recorded, or the sender and the members a stream message names).
 */
async function followMessage(d: EditDeps, caller: Caller, message: Entry, entry: NewEntry): Promise<void> {
  const { tenant } = caller;
  const ref = { tenant, author: entry.from, appinfo: entry.appinfo };
  if (message.conv.type !== 'group') {
    // runMergedFanout gives the peer's copy conv = `from` (the sender, who is the editor).
    await enqueueCopies(d, tenant, null, entry, holdersBesides(message, { way: 'direct' }, caller.user), editJobId(ref));
    return;
  }
  const key = groupKey(tenant, message.conv.id);
  const route = await groupRouteOf(d, key, message);
  if (route.way === 'stream') await appendToStream(d, tenant, key, message.conv.id, entry);
  const holders = holdersBesides(message, route, caller.user);
  if (holders.length === 0) return;
  const group = await d.stores.groups.getGroup(key);
  await enqueueCopies(d, tenant, group, entry, holders, route.way === 'stream' ? editCopiesJobId(ref) : editJobId(ref));
}
