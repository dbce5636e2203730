import {
  appendWithin,
  type AppendOutcome,
  buildMessageCopy,
  checkResend,
  convForRecipient,
  dedupKeyOf,
  fanoutJobId,
  groupNotifyJobId,
  OverloadedError,
  fanoutModeFor,
  ForbiddenError,
  groupKey,
  inboxKey,
  isCurrentMember,
  NotFoundError,
  serverEntryKey,
  streamMarkerAppinfo,
  workClassOf,
  type Entry,
  type FanoutMode,
  type GroupKey,
  type GroupRecord,
  type InboxKey,
  type Json,
  type NewEntry,
  type WorkQueue,
} from '@seqline/core';
import { enqueueAfterSend } from './after-send.ts';
import type { Caller, SendInput, SendResult } from './api.ts';
import { beforeSend, type BodyToStore } from './before-send.ts';
import type { MessagingContext } from './context.ts';
import type { MessagingEnv, MessagingPolicy, MessagingStores, MessagingWriters } from './deps.ts';
import { checkDirectMentions, checkGroupMentions, enqueueMentionCopies, withMentions } from './mentions.ts';
import { fanoutQueueFor, NOTIFY_QUEUE, toJson, type FanoutJob, type NotifyJob } from './queues.ts';
import { checkSendPolicy } from './send-policy.ts';
import { recordSnapshot, resentRecipients } from './copy-routes.ts';

/**
 * The marker stored with the sender's copy of a read-fanout message. The fanout mode is decided
 * once, at send time; the marker (a `tick` entry: "this group's stream has news") is appended in
 * the same atomic append as the copy, so a resend — even after the group changed tier — finds
 * which way the original went and takes the same way: a message is never both written to
 * inboxes and appended to the stream.
 */
function streamMarker(copy: NewEntry): NewEntry {
  return { kind: 'tick', appinfo: streamMarkerAppinfo(copy.appinfo), conv: copy.conv, from: copy.from, sendTime: copy.sendTime };
}

/** What a send uses: everything but the push bus (pushes follow appends, in the writers). */
export type SendDeps = Pick<MessagingContext, 'stores' | 'writers' | 'queue' | 'shedder' | 'inFlight' | 'hooks'> & {
  policy: Pick<MessagingPolicy, 'readFanout'>;
  env: Pick<MessagingEnv, 'clock' | 'logger'>;
};

/** Appends the sender's copy; a resend's append answers with the original. */
type OwnCopyDeps = { writers: Pick<MessagingWriters, 'inbox'>; stores: Pick<MessagingStores, 'timeline'> };

/** Read-fanout: the group stream's writer, its store (for prevGseq), the notify queue. */
export type StreamAppendDeps = {
  writers: Pick<MessagingWriters, 'groupStream'>;
  stores: Pick<MessagingStores, 'groupStreams'>;
  queue: WorkQueue;
};

/**
 * Send: the sender's own copy is appended first — that append is the dedup point (I3) and
 * its seq is the answer. Then, before the send is acknowledged (I4), either a fanout job is
 * persisted (write-fanout) or the one copy is appended to the group stream and a push job
 * persisted (read-fanout). A resend finds the sender's copy and redoes the second step, which
 * is idempotent; this closes the crash window between the two.
 */
export async function send(d: SendDeps, caller: Caller, input: SendInput): Promise<SendResult> {
  return d.inFlight.track(() =>
    'user' in input.to ? sendDirect(d, caller, input, input.to.user) : sendToGroup(d, caller, input, input.to.group),
  );
}

async function sendDirect(d: SendDeps, caller: Caller, input: SendInput, to: string): Promise<SendResult> {
  d.shedder.admit(workClassOf('user'));
  const { tenant, user } = caller;
  checkDirectMentions(input.mentions, to);
  // The tenant's send policy, then its before-send hook, before anything is stored.
  await checkSendPolicy(d, tenant, user, to);
  const decided = await beforeSend(d, caller, input);
  const copy = withMentions(
    buildMessageCopy({
      appinfo: input.appinfo,
      from: user,
      sendTime: d.env.clock.now(),
      type: input.type,
      body: decided.body,
      conv: { type: 'user', id: to },
    }),
    input.mentions,
  );
  const inbox = inboxKey(tenant, user);
  if (to === user) {
    return acknowledge(d, tenant, input, decided, await appendOwnCopy(d, inbox, [copy]));
  }
  // The recipient's copy goes with the sender's: its owner appends it right after (no second
  // round trip from here), and only when the sender's copy is new.
  const next = { inbox: inboxKey(tenant, to), entries: [recipientCopyOf(copy)], timeoutMs: DIRECT_DELIVERY_MS };
  const chained = await d.writers.inbox.appendThen({ inbox, entries: [copy], next });
  const { seq, duplicate, entry } = await ownCopyOf(d, inbox, chained.outcomes, copy);
  // A resend: deliver the original as stored (the first attempt may have stopped before it).
  const delivered = duplicate ? await deliverDirect(d, tenant, to, entry) : chained.next === 'appended';
  if (!delivered) {
    const job: FanoutJob = { tenant, entry, recipients: [to] };
    await d.queue.enqueue({
      queue: fanoutQueueFor(undefined),
      id: fanoutJobId({ tenant, sender: user, appinfo: input.appinfo }),
      payload: toJson(job),
    });
  }
  return acknowledge(d, tenant, input, decided, { seq, duplicate, entry });
}

/**
 * The last step before the ack: the after-send job (durable before the answer, so an
 * acknowledged message reaches the app). The answer carries `body` when what is stored
 * differs from what this request sent: the hook rewrote it, or a resend found another body.
 */
async function acknowledge(
  d: SendDeps,
  tenant: string,
  input: SendInput,
  decided: BodyToStore,
  own: { seq: number; duplicate: boolean; entry: NewEntry },
): Promise<SendResult> {
  await enqueueAfterSend(d, tenant, own.seq, own.entry);
  const result: SendResult = { seq: own.seq, sendTime: own.entry.sendTime, duplicate: own.duplicate };
  const stored: Json = own.entry.body ?? null;
  if (own.duplicate ? JSON.stringify(stored) !== JSON.stringify(input.body) : decided.rewritten) result.body = stored;
  return result;
}

/** How long a 1:1 send waits for the recipient's owner before handing the copy to the queue. */
const DIRECT_DELIVERY_MS = 1_000;

function recipientCopyOf(entry: NewEntry): NewEntry {
  return { ...entry, conv: convForRecipient(entry.conv, entry.from) };
}

/**
 * A 1:1 message has one recipient: appending its copy inline (durable before the ack, like a
 * fanout job would be) saves a queue round trip and a commit on the send → push path. When the
 * recipient's inbox owner is slow or unavailable (a shard handover), the copy goes through the
 * durable fanout queue instead, so the send is still acknowledged. Both paths are idempotent
 * by appinfo, so a late inline append and the job never make two copies.
 */
async function deliverDirect(d: Pick<SendDeps, 'writers' | 'env'>, tenant: string, to: string, entry: NewEntry): Promise<boolean> {
  const delivered = await appendWithin(
    (input) => d.writers.inbox.append(input),
    inboxKey(tenant, to),
    [recipientCopyOf(entry)],
    DIRECT_DELIVERY_MS,
    d.env.logger,
  );
  return delivered === 'appended';
}

async function sendToGroup(d: SendDeps, caller: Caller, input: SendInput, id: string): Promise<SendResult> {
  const { tenant, user } = caller;
  const key = groupKey(tenant, id);
  const group = await d.stores.groups.getGroup(key);
  if (!group) throw new NotFoundError(`group ${id} not found`);
  if (!isCurrentMember(await d.stores.groups.getMembership({ key, user }))) {
    throw new ForbiddenError(`not a member of group ${id}`);
  }
  await checkGroupMentions(d.stores.groups, key, input.mentions);
  d.shedder.admit(workClassOf('group', group.tier));
  const decided = await beforeSend(d, caller, input);
  const inbox = inboxKey(tenant, user);
  const copy = withMentions(
    buildMessageCopy({
      appinfo: input.appinfo,
      from: user,
      sendTime: d.env.clock.now(),
      type: input.type,
      body: decided.body,
      conv: { type: 'group', id },
    }),
    input.mentions,
  );
  const modeNow = fanoutModeFor(group.tier, d.policy.readFanout);
  const entries = [copy];
  // A copy already stored means a resend: never add a marker to it (it would change the decision).
  if (modeNow === 'read' && !(await d.stores.timeline.findSeqs({ inbox, keys: [dedupKeyOf(copy)] })).has(dedupKeyOf(copy))) {
    entries.push(streamMarker(copy));
  }
  // Write-fanout: the snapshot is recorded beside the sender's copy (one commit where the store
  // groups writes), and before the fanout job exists; a resend, a recall and an edit read it back.
  const [{ seq, duplicate, entry }, snapshot] = await Promise.all([
    appendOwnCopy(d, inbox, entries),
    modeNow === 'write' ? recordSnapshot(d, group, copy) : undefined,
  ]);
  const mode: FanoutMode = duplicate ? await originalMode(d, inbox, copy.appinfo) : modeNow;
  if (mode === 'read') {
    await appendToStream(d, tenant, key, id, entry);
    await enqueueMentionCopies(d, group, entry);
  } else {
    const recipients = !duplicate && snapshot !== undefined ? snapshot : await resentRecipients(d, group, entry);
    await enqueueWriteFanout(d, group, user, entry, recipients);
  }
  return acknowledge(d, tenant, input, decided, { seq, duplicate, entry });
}

/** Appends the sender's copy (first entry); on a duplicate, returns the original as stored. */
async function appendOwnCopy(
  d: OwnCopyDeps,
  inbox: InboxKey,
  entries: NewEntry[],
): Promise<{ seq: number; duplicate: boolean; entry: NewEntry }> {
  return ownCopyOf(d, inbox, await d.writers.inbox.append({ inbox, entries }), entries[0] as NewEntry);
}

/** The sender's copy after its append: as sent, or on a duplicate the original as stored. */
async function ownCopyOf(
  d: Pick<OwnCopyDeps, 'stores'>,
  inbox: InboxKey,
  outcomes: readonly AppendOutcome[],
  sent: NewEntry,
): Promise<{ seq: number; duplicate: boolean; entry: NewEntry }> {
  const [outcome] = outcomes;
  if (!outcome) throw new Error('append returned no outcome');
  if (!outcome.duplicate) return { seq: outcome.seq, duplicate: false, entry: sent };
  const original = await originalOf(d, inbox, outcome);
  // Only a true resend is answered duplicate and redelivered (the appinfo belongs to its sender).
  checkResend(original, sent.from, sent.conv);
  return { seq: outcome.seq, duplicate: true, entry: stripSeq(original) };
}

/**
 * A duplicate's original, as its append answered when the store deduped it; read by seq when
 * the owner answered from memory (it keeps seqs only) or is of the previous version.
 */
export async function originalOf(d: Pick<OwnCopyDeps, 'stores'>, inbox: InboxKey, outcome: AppendOutcome): Promise<Entry> {
  if (outcome.original !== undefined) return outcome.original;
  const original = await d.stores.timeline.getEntry({ inbox, seq: outcome.seq });
  // Unreadable right after its append: the client retries; never guess what the original was.
  if (!original) throw new OverloadedError('original of this appinfo not readable yet, retry');
  return original;
}

/** Which way a stored message went: read-fanout iff its marker is in the sender's inbox. */
async function originalMode(d: Pick<OwnCopyDeps, 'stores'>, inbox: InboxKey, appinfo: string): Promise<FanoutMode> {
  const marker = serverEntryKey(streamMarkerAppinfo(appinfo));
  const seq = (await d.stores.timeline.findSeqs({ inbox, keys: [marker] })).get(marker);
  if (seq === undefined) return 'write';
  return (await d.stores.timeline.getEntry({ inbox, seq }))?.kind === 'tick' ? 'read' : 'write';
}

async function enqueueWriteFanout(
  d: { queue: WorkQueue },
  group: GroupRecord,
  sender: string,
  entry: NewEntry,
  recipients: string[],
): Promise<void> {
  if (recipients.length === 0) return;
  const job: FanoutJob = { tenant: group.tenant, entry, recipients, groupKey: group.key };
  await d.queue.enqueue({
    queue: fanoutQueueFor(group.tier),
    id: fanoutJobId({ tenant: group.tenant, sender, appinfo: entry.appinfo }),
    payload: toJson(job),
  });
}

/**
 * Read-fanout: one copy in the group stream (dedup by appinfo, so a resend or a retried recall
 * returns the original gseq), then a durable job pushes it to the members connected.
 */
export async function appendToStream(d: StreamAppendDeps, tenant: string, key: GroupKey, id: string, entry: NewEntry): Promise<number> {
  const [outcome] = await d.writers.groupStream.append({ group: key, entries: [entry] });
  if (!outcome) throw new Error('group append returned no outcome');
  const prevGseq =
    outcome.prevSeq ?? (await d.stores.groupStreams.readBefore({ group: key, beforeGseq: outcome.seq, limit: 1 }))[0]?.seq ?? 0;
  const stored: Entry = { ...entry, seq: outcome.seq };
  const job: NotifyJob = { tenant, groupKey: key, group: id, entry: stored, prevGseq };
  await d.queue.enqueue({ queue: NOTIFY_QUEUE, id: groupNotifyJobId({ tenant, group: id, gseq: outcome.seq }), payload: toJson(job) });
  return outcome.seq;
}

export function stripSeq(e: Entry): NewEntry {
  const { seq: _seq, ...rest } = e;
  return rest;
}
