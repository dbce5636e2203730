/**
 * `send.mentions` (v1.1) against the conversation: the edge checked the shape (core's
 * checkMentions); here, who may be named. A mention of someone outside the conversation would
 * count in no inbox, so it is refused (BAD_REQUEST) before anything is stored.
 */
import { BadRequestError, isCurrentMember, MENTION_ALL, type GroupKey, type GroupStore, type NewEntry } from '@seqline/core';

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
  const memberships = await Promise.all(mentions.map((id) => groups.getMembership(key, id)));
  const outsider = mentions.find((_, i) => !isCurrentMember(memberships[i] ?? null));
  if (outsider !== undefined) throw new BadRequestError(`send: mentions: ${outsider} is not a member of this group`);
}

/** The copy with its mentions, in every inbox alike (left out when none were given). */
export function withMentions(copy: NewEntry, mentions: readonly string[] | undefined): NewEntry {
  return mentions === undefined ? copy : { ...copy, mentions: [...mentions] };
}
