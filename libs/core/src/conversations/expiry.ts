/**
 * Expiry: an inbox whose entries live for a retention period (the CQL timeline's TTL) loses
 * them oldest first, so what is left is every entry at or above a horizon — the seq of its
 * oldest entry still stored. The conversation index must then be the index of those entries:
 * what recountInboxIndex gives for them, with the cursors that point below the horizon cleared
 * (keptRecord). An expired message no longer counts as unread, and a conversation whose every
 * activity entry expired leaves the list (docs/decisions.md, "Conversation index follows the
 * timeline's retention").
 *
 * The store moves its index to a new horizon with expireConversations: every record, plus the
 * unread items below the horizon of those that may hold some (unreadMayLieBelow). Nothing else
 * is needed: a record's other fields at or above the horizon are the recount's already, and its
 * visible, deleted and edit rows below the horizon name entries nobody asks about any more (a
 * store lets them expire or ignores them).
 */
import { InternalError } from '../errors.ts';
import type { ConversationChanges, RecordChange } from './changes.ts';
import { conversationKey, type ConvRecord, type UnreadItem } from './rules.ts';

/**
 * The record as a recount of the entries at or above `horizon` has it, given that its newest
 * activity is among them: a read or clear cursor below the horizon points at entries that are
 * gone (the recount's own value there depends on which control entries survived), and so does a
 * `last` below it. Both are 0. Counts are left as they are (expireConversations takes the
 * expired items off).
 */
export function keptRecord(rec: ConvRecord, horizon: number): ConvRecord {
  if (rec.readSeq >= horizon && rec.clearedSeq >= horizon && rec.lastMsgSeq >= horizon) return rec;
  return {
    ...rec,
    conv: { ...rec.conv },
    readSeq: rec.readSeq < horizon ? 0 : rec.readSeq,
    clearedSeq: rec.clearedSeq < horizon ? 0 : rec.clearedSeq,
    lastMsgSeq: rec.lastMsgSeq < horizon ? 0 : rec.lastMsgSeq,
  };
}

/**
 * An entry's changes as an index at `horizon` stores them: every record kept (keptRecord). A
 * read or clear naming a seq below the horizon, or a `last` that falls back below it, then
 * leaves what a recount of the entries left would; applying later entries to such a record
 * gives the same result as to the unkept one, since nothing it points at below the horizon is
 * still there.
 */
export function changesAtHorizon(changes: ConversationChanges, horizon: number): ConversationChanges {
  if (horizon <= 0) return changes;
  return { ...changes, records: changes.records.map(({ before, after }) => ({ before, after: keptRecord(after, horizon) })) };
}

/**
 * Whether moving to `horizon` must read the record's unread items below it: it is kept, counts
 * some, and they may lie below the horizon (every unread item lies above both cursors).
 */
export function unreadMayLieBelow(rec: ConvRecord, horizon: number): boolean {
  return rec.lastSeq >= horizon && rec.unread > 0 && Math.max(rec.readSeq, rec.clearedSeq) < horizon - 1;
}

/** What moving an index to a new horizon changes. */
export interface ConversationExpiry {
  horizon: number;
  /** Records whose newest activity lies below the horizon: they go, with all their rows. */
  dropped: ConvRecord[];
  /** Kept records that change: expired unread items taken off, cursors below the horizon cleared. */
  records: RecordChange[];
  /** The unread items below the horizon of the kept records (a store may delete the range instead). */
  unreadRemove: UnreadItem[];
}

/**
 * Moves an index to `horizon`. `records` are all of the inbox's records; `unreadBelow` holds,
 * for each record that unreadMayLieBelow, its unread items with seq below the horizon (more, at
 * or above it, are ignored). A record it needs and lacks is an InternalError, like a drifted
 * count.
 */
export function expireConversations(input: {
  horizon: number;
  records: Iterable<ConvRecord>;
  unreadBelow: ReadonlyMap<string, readonly UnreadItem[]>;
}): ConversationExpiry {
  const { horizon } = input;
  const out: ConversationExpiry = { horizon, dropped: [], records: [], unreadRemove: [] };
  for (const rec of input.records) {
    if (rec.lastSeq < horizon) {
      out.dropped.push(rec);
      continue;
    }
    let after = keptRecord(rec, horizon);
    if (unreadMayLieBelow(rec, horizon)) {
      const key = conversationKey(rec.conv);
      const items = input.unreadBelow.get(key);
      if (items === undefined) throw new InternalError(`expiry: the unread items of ${key} below ${horizon} were not read`);
      const expired = items.filter((item) => item.seq < horizon);
      if (expired.length > 0) {
        after = after === rec ? { ...rec, conv: { ...rec.conv } } : after;
        for (const item of expired) {
          after.unread--;
          if (item.mention) after.mentions--;
        }
        out.unreadRemove.push(...expired);
      }
    }
    if (after.unread < 0 || after.mentions < 0 || after.mentions > after.unread) {
      throw new InternalError(`conversation index drifted at expiry: unread ${after.unread}, mentions ${after.mentions}`);
    }
    if (after !== rec) out.records.push({ before: rec, after });
  }
  return out;
}
