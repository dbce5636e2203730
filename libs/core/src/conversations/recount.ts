/**
 * The reference recount: every conversation field computed directly from a whole inbox. It is
 * the oracle of the "no drift" tests and what `seqline-admin conversations rebuild` compares the
 * stored index against. It shares the rules (rules.ts) with the incremental index but not its
 * machinery: one forward pass for the cursors (which depend on what existed when a read or clear
 * came), then each field as a plain predicate over the messages.
 */
import { dedupKeyOf, editedKey, recalledKey, type DedupKey } from '../dedup-key.ts';
import type { EditRef, Entry } from '../entry.ts';
import {
  conversationItemKey,
  conversationKey,
  countsAsUnread,
  deletedSeqsOf,
  editHits,
  editWins,
  groupTitleOf,
  isActivity,
  isConversationRead,
  mentionsUser,
  nextClearedSeq,
  nextReadSeq,
  readsOnSend,
  recallHits,
  titleWins,
  v1ReadSeqs,
  type ConvRecord,
  type GroupTitle,
  type UnreadItem,
} from './rules.ts';

/** The whole derived index of one inbox: records and side tables. */
export interface InboxIndexState {
  records: Map<string, ConvRecord>;
  /** By conversationItemKey. */
  unread: Map<string, UnreadItem>;
  /** conversationItemKeys of the visible items. */
  visible: Set<string>;
  deleted: Set<number>;
  /** Message seq → the edit shown. */
  edits: Map<number, EditRef>;
}

interface Cursors {
  conv: Entry['conv'];
  lastSeq: number;
  readSeq: number;
  clearedSeq: number;
  asOfSeq: number;
  title?: GroupTitle;
}

export function recountConversations(entries: readonly Entry[], self: string): Map<string, ConvRecord> {
  return recountInboxIndex(entries, self).records;
}

export function recountInboxIndex(entries: readonly Entry[], self: string): InboxIndexState {
  const inbox = [...entries].sort((a, b) => a.seq - b.seq);
  const bySeq = new Map<number, Entry>();
  const byKey = new Map<DedupKey, Entry>();
  for (const e of inbox) {
    bySeq.set(e.seq, e);
    const key = dedupKeyOf(e);
    if (!byKey.has(key)) byKey.set(key, e);
  }
  const cursors = new Map<string, Cursors>();
  const recalled = new Set<number>();
  const deleted = new Set<number>();
  const edits = new Map<number, EditRef>();

  for (const e of inbox) {
    const touch = (conv: Entry['conv']): Cursors | undefined => {
      const c = cursors.get(conversationKey(conv));
      if (c !== undefined) c.asOfSeq = e.seq;
      return c;
    };
    const earlier = (seq: number): Entry | null => (seq < e.seq ? (bySeq.get(seq) ?? null) : null);
    const earlierByKey = (key: DedupKey): Entry | null => {
      const t = byKey.get(key);
      return t !== undefined && t.seq < e.seq ? t : null;
    };

    if (isActivity(e)) {
      const key = conversationKey(e.conv);
      const c = cursors.get(key) ?? { conv: e.conv, lastSeq: 0, readSeq: 0, clearedSeq: 0, asOfSeq: 0 };
      cursors.set(key, c);
      c.lastSeq = e.seq;
      c.asOfSeq = e.seq;
      if (readsOnSend(e, self)) c.readSeq = e.seq;
      const title = groupTitleOf(e);
      if (title !== null && titleWins(c.title ?? null, title)) c.title = title;
      continue;
    }
    switch (e.kind) {
      case 'read':
        if (isConversationRead(e)) {
          const c = touch(e.conv);
          if (c !== undefined) c.readSeq = nextReadSeq(c, e.upToSeq as number);
        } else {
          for (const seq of v1ReadSeqs(e)) {
            const t = earlier(seq);
            if (t === null || !isActivity(t)) continue;
            const c = touch(t.conv);
            if (c !== undefined) c.readSeq = Math.max(c.readSeq, t.seq);
          }
        }
        break;
      case 'clear': {
        const c = touch(e.conv);
        if (c !== undefined) c.clearedSeq = nextClearedSeq(c, e.upToSeq);
        break;
      }
      case 'recall': {
        touch(e.conv); // named whether or not its message is here (apply.ts, touchNamed)
        const t = e.recall === undefined ? null : earlierByKey(recalledKey(e.from, e.recall));
        if (recallHits(e, t)) {
          recalled.add(t.seq);
          touch(t.conv);
        }
        break;
      }
      case 'edit': {
        touch(e.conv);
        const t = e.edit === undefined ? null : earlierByKey(editedKey(e.from, e.edit));
        if (e.edit !== undefined && editHits(e, t)) {
          if (editWins(edits.get(t.seq) ?? null, e.edit)) edits.set(t.seq, e.edit);
          touch(t.conv);
        }
        break;
      }
      case 'delete':
        for (const seq of deletedSeqsOf(e)) {
          const t = earlier(seq);
          if (t === null) continue;
          deleted.add(seq);
          if (isActivity(t)) touch(t.conv);
        }
        break;
      default:
        break;
    }
  }

  const records = new Map<string, ConvRecord>();
  for (const [key, c] of cursors) {
    const rec: ConvRecord = {
      conv: { type: c.conv.type, id: c.conv.id },
      lastSeq: c.lastSeq,
      lastMsgSeq: 0,
      readSeq: c.readSeq,
      clearedSeq: c.clearedSeq,
      unread: 0,
      mentions: 0,
      asOfSeq: c.asOfSeq,
    };
    // Neither deletes nor clears take it back: it names the group, it is no message of it.
    if (c.title !== undefined) {
      rec.title = c.title.name;
      rec.titleRev = c.title.rev;
    }
    records.set(key, rec);
  }
  const unread = new Map<string, UnreadItem>();
  const visible = new Set<string>();
  for (const t of inbox) {
    if (!isActivity(t) || deleted.has(t.seq) || recalled.has(t.seq)) continue;
    const key = conversationKey(t.conv);
    const rec = records.get(key) as ConvRecord;
    visible.add(conversationItemKey(key, t.seq));
    if (t.seq <= rec.clearedSeq) continue;
    rec.lastMsgSeq = Math.max(rec.lastMsgSeq, t.seq);
    if (t.seq <= rec.readSeq || !countsAsUnread(t, self)) continue;
    const mention = mentionsUser(t, self);
    unread.set(conversationItemKey(key, t.seq), { convKey: key, seq: t.seq, mention });
    rec.unread++;
    if (mention) rec.mentions++;
  }
  return { records, unread, visible, deleted, edits };
}
