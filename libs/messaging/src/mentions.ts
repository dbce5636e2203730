/**
 * `send.mentions` against the conversation: the edge checked the shape (core's
 * checkMentions); here, who may be named. A mention of someone outside the conversation would
 * count in no inbox, so it is refused (BAD_REQUEST) before anything is stored.
 */
import {
  BadRequestError,
  isCurrentMember,
  MENTION_ALL,
  mentionCopyRecipients,
  mentionJobId,
  type GroupKey,
  type GroupRecord,
  type GroupStore,
  type NewEntry,
  type WorkQueue,
} from '@seqline/core';
import { fanoutQueueFor, toJson, type FanoutJob } from './queues.ts';

/** 1:1: only the peer (for a note to self, the sender); `@all` names a group's members only. */
export function checkDirectMentions(mentions: readonly string[] | undefined, peer: string): void {
  for (const id of mentions ?? []) {
    if (id !== peer) throw new BadRequestError(`send: mentions: ${id} is not in this conversation (only ${peer} is)`);
  }
}

/** Group: `@all`, or current members. */
export async function checkGroupMentions(
  groups: Pick<GroupStore, 'getMembership'>,
  key: GroupKey,
  mentions: readonly string[] | undefined,
): Promise<void> {
  if (mentions === undefined || (mentions.length === 1 && mentions[0] === MENTION_ALL)) return;
  const memberships = await Promise.all(mentions.map((id) => groups.getMembership({ key, user: id })));
  const outsider = mentions.find((_, i) => !isCurrentMember(memberships[i] ?? null));
  if (outsider !== undefined) throw new BadRequestError(`send: mentions: ${outsider} is not a member of this group`);
}

/** The copy with its mentions, in every inbox alike (left out when none were given). */
export function withMentions(copy: NewEntry, mentions: readonly string[] | undefined): NewEntry {
  return mentions === undefined ? copy : { ...copy, mentions: [...mentions] };
}

/**
 * Read-fanout: a message naming members gets a copy in each named member's inbox too (not for
 * `@all`: that would be write-fanout to the whole group), so the inbox index counts the mention
 * exactly and the inbox append pushes it. Through the durable fanout queue, before the send is
 * acknowledged. Whom is core's mentionCopyRecipients — every member named, all of whom were
 * members when the send checked them — so a resend enqueues again (same job id, inbox dedup)
 * for the same users, and a recall or an edit reaches the same inboxes (copy-holders.ts).
 */
export async function enqueueMentionCopies(d: { queue: WorkQueue }, group: GroupRecord, entry: NewEntry): Promise<void> {
  const id = mentionJobId({ tenant: group.tenant, sender: entry.from, appinfo: entry.appinfo });
  await enqueueCopies(d, group.tenant, group, entry, mentionCopyRecipients(entry), id);
}

/** A fanout job of `entry` to `recipients` in the group's tier queue (nothing when none). */
export async function enqueueCopies(
  d: { queue: WorkQueue },
  tenant: string,
  group: Pick<GroupRecord, 'key' | 'tier'> | null,
  entry: NewEntry,
  recipients: readonly string[],
  jobId: string,
): Promise<void> {
  if (recipients.length === 0) return;
  const job: FanoutJob = { tenant, entry, recipients: [...recipients], ...(group ? { groupKey: group.key } : {}) };
  await d.queue.enqueue({ queue: fanoutQueueFor(group?.tier), id: jobId, payload: toJson(job) });
}
