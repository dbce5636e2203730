/**
 * Read-fanout groups in the conversation list. A group's conversation record
 * lives in the member's inbox index like any other (its create/add notice, the member's own
 * messages, the copies of messages that mention it); when the group has a stream, its stream
 * side is added on read: lastGseq, readGseq (the group cursor), the stream's unread and `@all`
 * mentions (core's StreamTally), and the newest message when the stream has the newer one.
 * Nothing is stored per member per stream message: the stream is the truth, read within the
 * member's windows. docs/decisions.md, "Read-fanout groups in the conversation list".
 */
import {
  groupKey,
  inboxKey,
  inStreamForm,
  StreamTally,
  newerMessage,
  splitKey,
  visibleRange,
  type ConversationState,
  type Conv,
  type ConversationStreamSides,
  type Entry,
  type GroupKey,
  type GroupMessage,
  type GseqRange,
  type Membership,
  type StreamTallyResult,
} from '@seqline/core';
import pLimit from 'p-limit';
import type { Caller } from './api.ts';
import type { MessagingStores } from './deps.ts';

export type GroupConversationDeps = { stores: Pick<MessagingStores, 'groups' | 'groupStreams'> };

/**
 * Stream rows one conversation read takes from one group at most: the bound on the work per
 * listed group. Below it `unread` is exact; past it the count is a lower bound (unreadCapped).
 */
export const STREAM_SCAN_MAX = 2_000;
const BATCH_MAX = 250;
const BATCH_MIN = 8;
/** Groups whose stream side is read at once. */
const GROUP_CONCURRENCY = 8;

export interface WithStreamSide {
  state: ConversationState;
  /** The stream's newest visible messages, newest first (empty for conversations without a stream). */
  tail: GroupMessage[];
  /** Gseqs of the stream messages passed that the member holds an inbox copy of (core's StreamTally). */
  held: ReadonlyMap<string, number>;
}

/** The newest gseq the member may read: the head clipped to its windows; 0 when none. */
export function lastVisibleGseq(m: Membership | null, head: number): number {
  let last = 0;
  for (const r of visibleRange(m)) {
    const top = Math.min(head, r.upTo);
    if (top > r.after) last = Math.max(last, top);
  }
  return last;
}

/**
 * withStreamSides as core's ConversationStreamSides, for an inbox owner's pushes: the inbox
 * names the member. A group without a stream costs one head read of it.
 */
export function conversationStreamSides(d: GroupConversationDeps): ConversationStreamSides {
  return {
    async withStreamSides({ inbox, states }) {
      const { tenant, id } = splitKey(inbox);
      return (await withStreamSides(d, { tenant, user: id }, states, 1)).map(({ state }) => state);
    },
  };
}

/** Adds the stream side to every group conversation whose group has a stream; others pass through. */
export async function withStreamSides(
  d: GroupConversationDeps,
  caller: Caller,
  states: readonly ConversationState[],
  tailWanted: number,
): Promise<WithStreamSide[]> {
  const limit = pLimit(GROUP_CONCURRENCY);
  return Promise.all(
    states.map((state) =>
      state.conv.type === 'group' ? limit(() => withStreamSide(d, caller, state, tailWanted)) : Promise.resolve(noStream(state)),
    ),
  );
}

function noStream(state: ConversationState): WithStreamSide {
  return { state, tail: [], held: new Map() };
}

async function withStreamSide(
  d: GroupConversationDeps,
  caller: Caller,
  state: ConversationState,
  tailWanted: number,
): Promise<WithStreamSide> {
  const side = await tallyStream(d, caller, state.conv.id, Math.max(1, tailWanted), STREAM_SCAN_MAX);
  if (side === null) return noStream(state);
  const t = side.tally;
  return {
    state: {
      ...state,
      unread: state.unread + t.unread,
      mentions: state.mentions + t.mentions,
      // A message the member holds a copy of is the inbox's (recalled or edited there), in stream form.
      last: nullableInStreamForm(newerMessage(state.last, t.tail[0]), t.held),
      stream: { lastGseq: side.lastGseq, readGseq: side.cursor, unreadCapped: side.capped },
    },
    tail: t.tail.slice(0, tailWanted),
    held: t.held,
  };
}

/** A group's stream-side unread, counted over at most `maxRows` rows above the member's cursor. */
export interface StreamUnread {
  unread: number;
  /** Rows above the cursor were left uncounted: `unread` is a lower bound. */
  capped: boolean;
}

/**
 * The stream side's unread of each group conversation (0 for others), each group's walk stopped
 * at `maxRows` rows: per group at most 3 point reads (head, membership, cursor) and `maxRows`
 * rows, whatever the stream holds. No tail is read: the walk ends at the cursor.
 */
export async function streamUnreads(
  d: GroupConversationDeps,
  caller: Caller,
  convs: readonly Conv[],
  maxRows: number,
): Promise<StreamUnread[]> {
  const limit = pLimit(GROUP_CONCURRENCY);
  return Promise.all(
    convs.map(async (conv) => {
      if (conv.type !== 'group') return { unread: 0, capped: false };
      const side = await limit(() => tallyStream(d, caller, conv.id, 0, maxRows));
      return side === null ? { unread: 0, capped: false } : { unread: side.tally.unread, capped: side.capped };
    }),
  );
}

interface TalliedStream {
  tally: StreamTallyResult;
  lastGseq: number;
  cursor: number;
  capped: boolean;
}

/** The member's tally of a group's stream; null when the group has no stream or the caller never was a member. */
async function tallyStream(
  d: GroupConversationDeps,
  caller: Caller,
  group: string,
  tailWanted: number,
  maxRows: number,
): Promise<TalliedStream | null> {
  const key = groupKey(caller.tenant, group);
  const head = await d.stores.groupStreams.headSeq(key);
  if (head === 0) return null;
  const [membership, cursor] = await Promise.all([
    d.stores.groups.getMembership({ key, user: caller.user }),
    d.stores.groupStreams.getCursor({ group: key, inbox: inboxKey(caller.tenant, caller.user) }),
  ]);
  if (membership === null) return null;
  const tally = new StreamTally(caller.user, cursor, tailWanted);
  const capped = await scanBackwards(d, key, visibleRange(membership), head, cursor, tally, maxRows);
  return { tally: tally.result(), lastGseq: lastVisibleGseq(membership, head), cursor, capped };
}

function nullableInStreamForm(entry: Entry | null, held: ReadonlyMap<string, number>): Entry | null {
  return entry === null ? null : inStreamForm(entry, held);
}

/**
 * Feeds the tally the visible rows from the head down, until it needs nothing below (the cursor
 * passed and the tail full) or `maxRows` rows were read. Returns whether counting stopped
 * early (rows above the cursor left unread).
 */
async function scanBackwards(
  d: GroupConversationDeps,
  key: GroupKey,
  ranges: readonly GseqRange[],
  head: number,
  cursor: number,
  tally: StreamTally,
  maxRows: number,
): Promise<boolean> {
  let budget = maxRows;
  for (const r of [...ranges].reverse()) {
    let top = Math.min(head, r.upTo); // highest gseq still to read in this range
    let first = true;
    while (top > r.after) {
      if (!tally.needsRowsAtOrBelow(top)) return false;
      if (budget === 0) return top > cursor;
      // The first read guesses from the gap to the cursor (gseqs may have gaps: never too few).
      const guess = first ? Math.max(BATCH_MIN, top - Math.max(cursor, r.after) + 2) : BATCH_MAX;
      const want = Math.min(budget, BATCH_MAX, guess);
      first = false;
      const rows = await d.stores.groupStreams.readBefore({ group: key, beforeGseq: top + 1, limit: want });
      budget -= rows.length;
      for (const row of rows) {
        if (row.seq <= r.after) break;
        tally.add(row);
        top = row.seq - 1;
      }
      if (rows.length < want || (rows.at(-1)?.seq ?? 0) <= r.after) break;
    }
  }
  return false;
}
