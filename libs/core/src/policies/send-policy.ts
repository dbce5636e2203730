/**
 * The built-in send policy (docs/protocol.md, "Send policy"): with `shared-group`, a 1:1 send
 * needs the sender and the recipient to be current members of at least one common group. Pure:
 * messaging reads the groups and memberships and asks these functions.
 */
import type { GroupKey } from '../ids.ts';
import { isCurrentMember } from '../membership.ts';
import type { Membership } from '../group-ports.ts';
import type { SendPolicy } from './types.ts';

/** What a refused sender is told (FORBIDDEN); it names no group. */
export const NOT_IN_SHARED_GROUP = 'send policy: you and the recipient share no group';

/** Whether a 1:1 send must be checked: shared-group, and not a note to oneself. */
export function needsSharedGroup(policy: SendPolicy, from: string, to: string): boolean {
  return policy === 'shared-group' && from !== to;
}

/**
 * The groups both have ever been in (groupsOf names every group with any window, current or
 * not), sorted: the only ones whose memberships can make them group mates now.
 */
export function candidateGroups(senderGroups: readonly GroupKey[], recipientGroups: readonly GroupKey[]): GroupKey[] {
  const theirs = new Set(recipientGroups);
  return [...new Set(senderGroups)].filter((g) => theirs.has(g)).sort();
}

/** Group mates in one group: both are current members (an open window each). */
export function areGroupMates(sender: Membership | null, recipient: Membership | null): boolean {
  return isCurrentMember(sender) && isCurrentMember(recipient);
}
