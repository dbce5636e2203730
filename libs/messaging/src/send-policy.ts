/**
 * The tenant's built-in send policy, applied to 1:1 sends before any hook. The rule is core's
 * (policies/send-policy.ts); this reads what it needs: both users' groups, then their memberships
 * of the groups they have in common, a few at a time, until one makes them group mates.
 */
import { areGroupMates, candidateGroups, ForbiddenError, inboxKey, needsSharedGroup, NOT_IN_SHARED_GROUP } from '@seqline/core';
import type { MessagingHooks, MessagingStores } from './deps.ts';

export type SendPolicyDeps = { stores: Pick<MessagingStores, 'groups'>; hooks: Pick<MessagingHooks, 'of'> };

/** Memberships read at once while looking for a common group. */
const CHECKS_AT_ONCE = 8;

/** Throws FORBIDDEN when the tenant's policy refuses `from` → `to` (1:1). */
export async function checkSendPolicy(d: SendPolicyDeps, tenant: string, from: string, to: string): Promise<void> {
  if (!needsSharedGroup(d.hooks.of(tenant).sendPolicy, from, to)) return;
  const [mine, theirs] = await Promise.all([
    d.stores.groups.groupsOf(inboxKey(tenant, from)),
    d.stores.groups.groupsOf(inboxKey(tenant, to)),
  ]);
  const common = candidateGroups(mine, theirs);
  for (let i = 0; i < common.length; i += CHECKS_AT_ONCE) {
    const found = await Promise.all(
      common.slice(i, i + CHECKS_AT_ONCE).map(async (g) => {
        const [a, b] = await Promise.all([
          d.stores.groups.getMembership({ key: g, user: from }),
          d.stores.groups.getMembership({ key: g, user: to }),
        ]);
        return areGroupMates(a, b);
      }),
    );
    if (found.includes(true)) return;
  }
  throw new ForbiddenError(NOT_IN_SHARED_GROUP);
}
