/**
 * The badge of an offline notification: the user's total unread, at a cost per notification
 * that does not grow with the group streams. The inbox side is the conversation index's unread,
 * kept on append (one list read per 500 conversations). A read-fanout group adds its stream
 * side, which nothing stores per member: it is counted from the stream (core's StreamTally, as
 * `conversations` counts it), walking down from the head at most BADGE_STREAM_ROWS rows. Below
 * that the badge is exact and equals what `conversations` sums; past it the group adds what the
 * walk counted and the badge is a lower bound, flagged `badgeCapped` ("N+").
 * docs/decisions.md, "The offline badge of huge groups: exact up to 100 rows a group".
 *
 * The index may trail the entries (on CQL for a moment after each append, and after a failed
 * index write until the next append to the inbox): a badge is counted only once the index has
 * reached the newest entry it must count, waited for as `sync` waits (watermarkReaching, within
 * `syncConvsWaitMs`); still behind, the count fails with BadgeIndexBehindError and the job is
 * retried — never a badge lower than the entries the notification names
 * (docs/decisions.md, "A notification's badge counts its own entries").
 */
import { CONVERSATIONS_MAX_LIMIT, inboxKey, OverloadedError, type InboxKey } from '@seqline/core';
import type { MessagingPolicy, MessagingStores } from './deps.ts';
import { streamUnreads } from './group-conversations.ts';
import { watermarkReaching } from './sync-convs.ts';

/**
 * Conversation-list pages read for a badge, CONVERSATIONS_MAX_LIMIT (500) each: the badge sums
 * the unread of the user's 2 000 most recent conversations; older ones are left out.
 */
export const BADGE_MAX_PAGES = 4;
/**
 * Stream rows a badge reads from one read-fanout group at most: an IM badge past "99+" in one
 * group tells the user nothing more, and it bounds the badge's reads per group to 3 point reads
 * and this many rows.
 */
export const BADGE_STREAM_ROWS = 100;

export type BadgeDeps = {
  stores: Pick<MessagingStores, 'conversations' | 'groups' | 'groupStreams'>;
  policy?: Pick<MessagingPolicy, 'syncConvsWaitMs'>;
};

/** The conversation index had not reached an entry the badge must count within the wait: retry later. */
export class BadgeIndexBehindError extends OverloadedError {
  constructor(
    readonly inbox: InboxKey,
    readonly seq: number,
    readonly watermark: number,
  ) {
    super(`conversation index of ${inbox} at seq ${watermark}, behind seq ${seq}: the badge cannot count it yet`);
  }
}

export interface UnreadBadge {
  badge: number;
  /** A read-fanout group had more than BADGE_STREAM_ROWS rows above the cursor: `badge` is a lower bound. */
  capped: boolean;
}

/**
 * The user's total unread over at most BADGE_MAX_PAGES pages, each group's stream side over at
 * most BADGE_STREAM_ROWS rows, counting every inbox entry up to `throughSeq` at least (0: as
 * the index stands): throws BadgeIndexBehindError when the index has not reached it in time.
 */
export async function unreadBadge(d: BadgeDeps, tenant: string, user: string, throughSeq = 0): Promise<UnreadBadge> {
  const inbox = inboxKey(tenant, user);
  if (throughSeq > 0) {
    const watermark = await watermarkReaching(d.stores.conversations, inbox, throughSeq, d.policy?.syncConvsWaitMs);
    // Each page read from here on is exact at the watermark or later, so it counts every entry up to throughSeq.
    if (watermark < throughSeq) throw new BadgeIndexBehindError(inbox, throughSeq, watermark);
  }
  let badge = 0;
  let capped = false;
  let beforeLastSeq: number | undefined;
  for (let page = 0; page < BADGE_MAX_PAGES; page++) {
    const listed = await d.stores.conversations.listConversations({
      inbox,
      limit: CONVERSATIONS_MAX_LIMIT,
      ...(beforeLastSeq !== undefined && { beforeLastSeq }),
    });
    const streams = await streamUnreads(
      d,
      { tenant, user },
      listed.convs.map((s) => s.conv),
      BADGE_STREAM_ROWS,
    );
    for (const state of listed.convs) badge += state.unread;
    for (const side of streams) {
      badge += side.unread;
      capped ||= side.capped;
    }
    const last = listed.convs.at(-1);
    if (!listed.hasMore || last === undefined) break;
    beforeLastSeq = last.lastSeq;
  }
  return { badge, capped };
}
