/**
 * The conversation rules, stated once. The incremental index (apply.ts), the
 * reference recount (recount.ts) and every adapter use these and nothing else, so the two
 * computations cannot disagree on what a rule is — only on how they keep state.
 */
import type { Conv, EditRef, Entry } from '../entry.ts';

/** The mention that means every member. A user whose id is literally "@all" cannot be mentioned alone. */
export const MENTION_ALL = '@all';

/**
 * Key of a conversation in the index: `user:bob`, `group:g1`. Ids never contain ':', so it is
 * unambiguous and sorts the two types apart.
 */
export function conversationKey(conv: Conv): string {
  return `${conv.type}:${conv.id}`;
}

/** Key of one item (an entry of a conversation) in the side tables. */
export function conversationItemKey(convKey: string, seq: number): string {
  return `${convKey}|${seq}`;
}

/** The state of one conversation of one inbox. Fixed size: it never grows with the unread count. */
export interface ConvRecord {
  conv: Conv;
  /** Seq of the newest activity entry (the list's sort key); never moves back, not even on delete. */
  lastSeq: number;
  /** Seq of the newest visible activity entry (`last` on the wire); 0 when none is visible. */
  lastMsgSeq: number;
  /** Highest seq read; never moves back, never above lastSeq. */
  readSeq: number;
  /** Activity entries at or below it are hidden (clear); never moves back, never above lastSeq. */
  clearedSeq: number;
  /** Visible messages from others above readSeq and clearedSeq. */
  unread: number;
  /** Of those, the ones mentioning the inbox owner (or @all). */
  mentions: number;
  /** Seq of the latest inbox entry that concerned this conversation (see touches in apply.ts). */
  asOfSeq: number;
  /**
   * A group conversation's name: the one the winning group notice of this inbox carries
   * (groupTitleOf, titleWins). Absent for 1:1 conversations and for a group none of whose
   * notices here carries a name (notices written before names were carried).
   */
  title?: string;
  /** The revision of `title`; present exactly when title is. */
  titleRev?: number;
}

/** A row of the unread-items side table: one per counted message. */
export interface UnreadItem {
  convKey: string;
  seq: number;
  mention: boolean;
}

/** A row of the visible-items side table: an activity entry neither recalled nor deleted. */
export interface ConvItem {
  convKey: string;
  seq: number;
}

export function emptyConvRecord(conv: Conv): ConvRecord {
  return {
    conv: { type: conv.type, id: conv.id },
    lastSeq: 0,
    lastMsgSeq: 0,
    readSeq: 0,
    clearedSeq: 0,
    unread: 0,
    mentions: 0,
    asOfSeq: 0,
  };
}

/**
 * Activity: an entry that belongs to a conversation's timeline. It creates the conversation,
 * moves its lastSeq and can be its `last`. Messages are, and group events (create, add, remove:
 * a notice in the chat, and how a member learns of a group it has no message of yet) — except
 * `group.tier`, a switch of storage mode that is no news to a user.
 */
export function isActivity(entry: Entry): boolean {
  if (entry.kind === 'msg') return true;
  return entry.kind === 'group' && entry.type !== 'group.tier';
}

/** A group's name as a group notice carries it, with its revision (0: the name given at creation). */
export interface GroupTitle {
  name: string;
  rev: number;
}

/**
 * The group name a notice carries: `body.name` with `body.nameRev` (absent: 0). Every notice
 * but group.tier carries it (create, add, remove, rename); one without a name (written before
 * names were carried), and every other entry, carries none.
 */
export function groupTitleOf(entry: Entry): GroupTitle | null {
  if (entry.kind !== 'group' || entry.conv.type !== 'group' || !isActivity(entry)) return null;
  const body = entry.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const name = body['name'];
  const rev = body['nameRev'] ?? 0;
  if (typeof name !== 'string' || typeof rev !== 'number' || !Number.isSafeInteger(rev) || rev < 0) return null;
  return { name, rev };
}

/**
 * Whether a notice's name becomes the title: a higher revision than the one shown, or the same
 * one again (the same name; the later notice wins, as it would in a replay). Renames are numbered
 * by the group record, so notices of one group that reach an inbox out of order (its fanout jobs
 * run concurrently, and retry) still leave the newest name.
 */
export function titleWins(current: GroupTitle | null, next: GroupTitle): boolean {
  return current === null || next.rev >= current.rev;
}

/** The title a record shows, null when none. */
export function recordTitle(rec: Pick<ConvRecord, 'title' | 'titleRev'>): GroupTitle | null {
  return rec.title === undefined ? null : { name: rec.title, rev: rec.titleRev ?? 0 };
}

/**
 * Whether the entry is a message that counts as unread while it is above the read cursor and
 * visible: a `msg` from someone else. Group events and the user's own messages never count.
 */
export function countsAsUnread(entry: Entry, self: string): boolean {
  return entry.kind === 'msg' && entry.from !== self;
}

/** A counted message naming the user or @all. Mentioning oneself counts nothing. */
export function mentionsUser(entry: Entry, self: string): boolean {
  if (!countsAsUnread(entry, self) || entry.mentions === undefined) return false;
  return entry.mentions.includes(self) || entry.mentions.includes(MENTION_ALL);
}

/** Sending a message reads the conversation up to it (replying reads the chat, as in WeChat). */
export function readsOnSend(entry: Entry, self: string): boolean {
  return entry.kind === 'msg' && entry.from === self;
}

/**
 * The read cursor after "read up to `upToSeq`": never back, never past the conversation's
 * lastSeq at that moment (a client's too-high upToSeq must not pre-read later messages).
 */
export function nextReadSeq(rec: Pick<ConvRecord, 'readSeq' | 'lastSeq'>, upToSeq: number): number {
  return Math.max(rec.readSeq, Math.min(upToSeq, rec.lastSeq));
}

/** The clear mark after a clear; without upToSeq, everything up to lastSeq. Never back. */
export function nextClearedSeq(rec: Pick<ConvRecord, 'clearedSeq' | 'lastSeq'>, upToSeq: number | undefined): number {
  return Math.max(rec.clearedSeq, Math.min(upToSeq ?? rec.lastSeq, rec.lastSeq));
}

/** A conversation read names a conversation and upToSeq; a read by seqs lists them (referSeq the highest). */
export function isConversationRead(entry: Entry): boolean {
  return entry.kind === 'read' && entry.upToSeq !== undefined;
}

/** The seqs a read by seqs marks read. */
export function v1ReadSeqs(entry: Entry): number[] {
  if (entry.seqs !== undefined) return entry.seqs;
  return entry.referSeq !== undefined ? [entry.referSeq] : [];
}

/**
 * Which conversations an inbox entry touches, for naming them in a sync answer or a push: its
 * own `conv` for an activity entry, a conversation read, a clear, a recall or an edit (recall
 * and edit entries carry their message's conv); for a read by seqs or a delete, the conversations of
 * the activity entries at the seqs it names (the caller looks those up); otherwise none.
 */
export function conversationTouch(entry: Entry): { conv: Conv } | { namedSeqs: number[] } | null {
  if (isActivity(entry) || isConversationRead(entry) || entry.kind === 'clear' || entry.kind === 'recall' || entry.kind === 'edit') {
    return { conv: entry.conv };
  }
  if (entry.kind === 'read') return { namedSeqs: v1ReadSeqs(entry) };
  if (entry.kind === 'delete') return { namedSeqs: entry.seqs ?? [] };
  return null;
}

/** The seqs a delete names that can refer to an earlier entry, once each. */
export function deletedSeqsOf(entry: Entry): number[] {
  return [...new Set(entry.seqs ?? [])].filter((s) => s < entry.seq);
}

/** A recall hides `target` only if it is an earlier message (a recall of anything else is ignored). */
export function recallHits(recall: Entry, target: Entry | null): target is Entry {
  return target !== null && target.kind === 'msg' && target.seq < recall.seq;
}

/** An edit applies only to an earlier message of the edit's own author (sender only). */
export function editHits(edit: Entry, target: Entry | null): target is Entry {
  return target !== null && edit.edit !== undefined && target.kind === 'msg' && target.seq < edit.seq && target.from === edit.from;
}

/**
 * Of two edits of one message, the one shown: the latest editedAt, and on a tie the one
 * appended later. Every inbox holding the message then shows the same text, whatever order the
 * concurrent edits reached it in (unless their editedAt tie).
 */
export function editWins(current: EditRef | null, next: EditRef): boolean {
  return current === null || next.editedAt >= current.editedAt;
}
