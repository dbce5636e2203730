import { canReadGseq, fanoutModeFor, inboxKey, splitKey } from '@seqline/core';
import type { Caller, GroupNews } from './api.ts';
import type { MessagingDeps } from './deps.ts';

/**
 * The `groups` part of a sync answer: read-fanout groups whose head is past the caller's
 * cursor and whose new messages the caller may read. The request stays one number.
 */
export async function listGroupNews(d: MessagingDeps, caller: Caller): Promise<GroupNews[]> {
  if (!d.readFanout) return [];
  const inbox = inboxKey(caller.tenant, caller.user);
  const news: GroupNews[] = [];
  for (const key of await d.groups.groupsOf(inbox)) {
    const group = await d.groups.getGroup(key);
    if (!group || fanoutModeFor(group.tier, d.readFanout) !== 'read') continue;
    const [headGseq, cursor, membership] = await Promise.all([
      d.groupStreams.headSeq(key), d.groupStreams.getCursor(key, inbox), d.groups.getMembership(key, caller.user),
    ]);
    if (headGseq > cursor && canReadGseq(membership, cursor + 1)) {
      news.push({ id: splitKey(key).id, headGseq, cursor });
    }
  }
  return news;
}
