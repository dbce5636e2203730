/**
 * Where a group message went, for the one rule of who holds a copy (core's copy-holders.ts):
 * a send records its write-fanout snapshot here, and a resend, a recall and an edit read it
 * back, so each reaches exactly the inboxes the message reached.
 */
import {
  messageKey,
  writeFanoutSnapshot,
  type Entry,
  type GroupKey,
  type GroupMessageRef,
  type GroupRecord,
  type MessageRoute,
  type NewEntry,
} from '@seqline/core';
import type { MessagingStores } from './deps.ts';

type RouteDeps = { stores: Pick<MessagingStores, 'groups' | 'groupStreams'> };

/**
 * How a stored group message went: into the group stream when it is there (read-fanout), else
 * to the inboxes of the snapshot its send recorded. No snapshot recorded means its send stopped
 * before making a fanout job: no inbox but the sender's holds it.
 */
export async function groupRouteOf(
  d: RouteDeps,
  key: GroupKey,
  message: Pick<Entry, 'from' | 'appinfo' | 'sendTime'>,
): Promise<MessageRoute> {
  const found = await d.stores.groupStreams.findSeqs({ group: key, keys: [messageKey(message.from, message.appinfo)] });
  if (found.size > 0) return { way: 'stream' };
  const recorded = await d.stores.groups.recordedRecipients(refOf(key, message));
  return { way: 'inboxes', recipients: recorded ?? [] };
}

type GroupsDeps = { stores: Pick<MessagingStores, 'groups'> };

/**
 * A write-fanout send's snapshot — the group's members now, but the sender — recorded for this
 * attempt (keyed by its copy's sendTime). A send takes it beside the append of the sender's
 * copy, so both land in one commit where the store groups its writes; if the copy turns out to
 * be a resend, this attempt's record is never read (the stored copy's sendTime names the
 * first attempt's) and expires with the rest.
 */
export async function recordSnapshot(
  d: GroupsDeps,
  group: Pick<GroupRecord, 'key'>,
  copy: Pick<NewEntry, 'from' | 'appinfo' | 'sendTime'>,
): Promise<string[]> {
  const recipients = writeFanoutSnapshot(await d.stores.groups.listMembers(group.key), copy.from);
  await d.stores.groups.recordRecipients({ ...refOf(group.key, copy), recipients });
  return recipients;
}

/**
 * The recipients of a resent write-fanout message: the snapshot its first attempt recorded. When
 * there is none, that attempt stopped before recording it (so before making a fanout job: no
 * copy went out), and this attempt is the send: it takes and records the snapshot now.
 */
export async function resentRecipients(
  d: GroupsDeps,
  group: Pick<GroupRecord, 'key'>,
  stored: Pick<NewEntry, 'from' | 'appinfo' | 'sendTime'>,
): Promise<string[]> {
  return (await d.stores.groups.recordedRecipients(refOf(group.key, stored))) ?? recordSnapshot(d, group, stored);
}

function refOf(key: GroupKey, m: Pick<Entry, 'from' | 'appinfo' | 'sendTime'>): GroupMessageRef {
  return { key, sender: m.from, appinfo: m.appinfo, sendTime: m.sendTime };
}
