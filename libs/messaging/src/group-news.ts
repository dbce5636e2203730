import { inboxKey, splitKey, visibleRange, type Membership } from '@seqline/core';
import type { Caller, GroupNews } from './api.ts';
import type { MessagingStores } from './deps.ts';

/**
 * The `groups` part of a sync answer: group streams whose head is past the caller's cursor
 * within a window the caller may read. The request stays one number.
 *
 * Every group the user was ever in is considered — also one that has since gone back to
 * write-fanout, whose stream may still hold unread messages — but only by its head first (one
 * key lookup per group, all at once); cursor and membership are read only for groups whose
 * stream is not empty. Most groups never had a stream and cost one lookup.
 */
export async function listGroupNews(d: { stores: Pick<MessagingStores, 'groups' | 'groupStreams'> }, caller: Caller): Promise<GroupNews[]> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const keys = await d.stores.groups.groupsOf(inbox);
  if (keys.length === 0) return [];
  const heads = await Promise.all(keys.map((k) => d.stores.groupStreams.headSeq(k)));
  const withStream = keys.flatMap((key, i) => ((heads[i] ?? 0) > 0 ? [{ key, head: heads[i] as number }] : []));
  const states = await Promise.all(
    withStream.map(({ key }) =>
      Promise.all([d.stores.groupStreams.getCursor({ group: key, inbox }), d.stores.groups.getMembership({ key, user: caller.user })]),
    ),
  );
  const news: GroupNews[] = [];
  withStream.forEach(({ key, head }, i) => {
    const [cursor, membership] = states[i] as [number, Membership | null];
    const from = firstUnread(membership, cursor, head);
    if (from !== undefined) news.push({ id: splitKey(key).id, headGseq: head, cursor: from });
  });
  return news;
}

/**
 * The cursor as the member can use it: its stored cursor, moved past any stretch it may not
 * read (a joiner starts at its join point). Undefined when nothing in (cursor, head] is visible.
 */
export function firstUnread(m: Membership | null, cursor: number, head: number): number | undefined {
  for (const r of visibleRange(m)) {
    const from = Math.max(cursor, r.after);
    if (from < Math.min(r.upTo, head)) return from;
  }
  return undefined;
}
