/**
 * `group.rename`: the admin gives the group a new name. The record takes it with the next name
 * revision, and a `group.rename` notice carrying both goes to every current member, in every
 * tier: the notice is how each member's conversation title follows (core's titleWins), and it
 * is one small entry per member, as the creation notice is. A huge group's membership news is
 * not fanned out (its member lists are what degradation saves); a rename has none.
 */
import {
  actsAsGroupAdmin,
  buildGroupEventEntry,
  ForbiddenError,
  groupKey,
  groupRenameAppinfo,
  isCurrentMember,
  type GroupKey,
  type GroupRecord,
} from '@seqline/core';
import type { Caller } from './api.ts';
import type { MessagingContext } from './context.ts';
import type { MessagingEnv } from './deps.ts';
import { announce, requireGroup, type GroupReadDeps } from './groups.ts';

export type RenameGroupDeps = Pick<MessagingContext, 'membershipLocks' | 'queue'> & GroupReadDeps & { env: Pick<MessagingEnv, 'clock'> };

export interface RenameGroupResult {
  id: string;
  name: string;
}

/**
 * Checked like a removal of others, under the group's membership lock: unknown group NOT_FOUND,
 * not a current member or not the (current) admin FORBIDDEN, nothing written. The name's limits
 * are group.create's, checked at the edge. Renaming to the current name stores nothing new: it
 * delivers the current name's notice again (one appinfo per revision, so no inbox holds it
 * twice), which finishes a rename cut off between its record and its notice.
 */
export async function renameGroup(d: RenameGroupDeps, caller: Caller, input: { id: string; name: string }): Promise<RenameGroupResult> {
  const key = groupKey(caller.tenant, input.id);
  return d.membershipLocks.run(key, () => applyRename(d, caller, key, input));
}

async function applyRename(
  d: Omit<RenameGroupDeps, 'membershipLocks'>,
  caller: Caller,
  key: GroupKey,
  input: { id: string; name: string },
): Promise<RenameGroupResult> {
  const group = await requireGroup(d, key, input.id);
  const membership = await d.stores.groups.getMembership({ key, user: caller.user });
  if (!isCurrentMember(membership)) throw new ForbiddenError(`not a member of group ${input.id}`);
  if (!actsAsGroupAdmin(group.admin, caller.user, membership)) throw new ForbiddenError('only the group admin renames the group');
  if (group.name === input.name) {
    // Revision 0 is the creation's name: its notice is the group.create one.
    if ((group.nameRev ?? 0) > 0) await announceName(d, caller, group, group.nameRev ?? 0);
    return { id: input.id, name: group.name };
  }
  const { nameRev } = await d.stores.groups.renameGroup({ key, name: input.name });
  await announceName(d, caller, { ...group, name: input.name }, nameRev);
  return { id: input.id, name: input.name };
}

/**
 * The notice to every current member. They are listed after the rename is stored: a member added
 * meanwhile by another process either is listed here or read the new name for its own notice
 * (groups.ts, applyChange).
 */
async function announceName(
  d: Omit<RenameGroupDeps, 'membershipLocks'>,
  caller: Caller,
  group: GroupRecord,
  nameRev: number,
): Promise<void> {
  const members = await d.stores.groups.listMembers(group.key);
  const entry = buildGroupEventEntry({
    group: group.id,
    actor: caller.user,
    event: 'rename',
    name: group.name,
    nameRev,
    time: d.env.clock.now(),
    appinfo: groupRenameAppinfo({ group: group.id, nameRev }),
  });
  await announce(d, caller.tenant, group.key, group.tier, members, entry);
}
