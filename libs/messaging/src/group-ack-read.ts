/**
 * group.ack reads a read-fanout group's conversation on both sides. The stream side is the
 * cursor itself; the inbox side holds the copies of messages that mention the member (and
 * anything from before the group went read-fanout), counted by the inbox index against its
 * readSeq. So that an ack past a mention also stops counting it, the ack appends a `read
 * {conv, upToSeq}` to the member's inbox — only when the inbox side has something unread the
 * ack covers, so a plain ack stays one cursor write (plus one index read).
 */
import {
  countsAsUnread,
  dedupKeyOf,
  groupKey,
  inboxKey,
  readAppinfo,
  type Conv,
  type DedupKey,
  type Entry,
  type GroupKey,
  type InboxKey,
  type Membership,
} from '@seqline/core';
import type { Caller } from './api.ts';
import { appendOwn, type OwnEntryDeps } from './conversation-ops.ts';
import type { MessagingStores } from './deps.ts';
import { lastVisibleGseq } from './group-conversations.ts';

export type AckReadDeps = OwnEntryDeps & { stores: Pick<MessagingStores, 'groupStreams'> };

/** Inbox entries above readSeq looked at to place the read; past it the ack reads only the stream. */
const INBOX_SIDE_MAX = 1_000;
const PAGE = 200;

export async function readInboxSideOnAck(
  d: AckReadDeps,
  caller: Caller,
  id: string,
  membership: Membership,
  cursor: number,
  head: number,
): Promise<void> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const conv: Conv = { type: 'group', id };
  const state = await d.stores.conversations.getConversation({ inbox, conv });
  if (state === null || state.unread === 0) return;
  // Acked to the end of what the member may read: the whole conversation is read.
  const upTo =
    cursor >= lastVisibleGseq(membership, head)
      ? state.lastSeq
      : await coveredInboxSeq(d, inbox, groupKey(caller.tenant, id), conv, state.readSeq, cursor, caller.user);
  if (upTo <= state.readSeq) return;
  await appendOwn(d, inbox, {
    kind: 'read',
    appinfo: readAppinfo({ reader: caller.user, made: d.env.newId() }),
    conv,
    from: caller.user,
    sendTime: d.env.clock.now(),
    upToSeq: upTo,
  });
}

/**
 * The highest inbox seq up to which every unread stream copy has gseq <= cursor: copies of
 * later stream messages must stay unread even if the inbox got them out of gseq order.
 * Entries that are not stream copies (write-fanout leftovers) neither stop nor set it.
 */
async function coveredInboxSeq(
  d: AckReadDeps,
  inbox: InboxKey,
  key: GroupKey,
  conv: Conv,
  readSeq: number,
  cursor: number,
  self: string,
): Promise<number> {
  const above: Entry[] = [];
  for (let before: number | undefined; above.length < INBOX_SIDE_MAX;) {
    const page = await d.stores.conversations.conversationEntries({ inbox, conv, ...(before ? { beforeSeq: before } : {}), limit: PAGE });
    const fresh = page.entries.filter((e) => e.seq > readSeq);
    above.push(...fresh);
    const last = page.entries.at(-1);
    if (!page.hasMore || last === undefined || fresh.length < page.entries.length) break;
    before = last.seq;
  }
  if (above.length >= INBOX_SIDE_MAX) return readSeq; // too much to place it exactly: leave the inbox side
  const counted = above.filter((e) => countsAsUnread(e, self)).sort((a, b) => a.seq - b.seq);
  const gseqs =
    counted.length === 0
      ? new Map<DedupKey, number>()
      : await d.stores.groupStreams.findSeqs({ group: key, keys: counted.map(dedupKeyOf) });
  let upTo = readSeq;
  for (const e of counted) {
    const gseq = gseqs.get(dedupKeyOf(e));
    if (gseq === undefined) continue;
    if (gseq > cursor) break;
    upTo = e.seq;
  }
  return upTo;
}
