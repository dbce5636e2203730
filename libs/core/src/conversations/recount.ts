/**
 * The reference recount: every conversation field computed directly from a whole inbox. It is
 * the oracle of the "no drift" tests and what `seqline-admin conversations rebuild` compares the
 * stored index against. It shares the rules (rules.ts) with the incremental index but not its
 * machinery: one forward pass for the cursors (which depend on what existed when a read or clear
 * came), then each field as a plain predicate over the messages. InboxRecount runs both passes a
 * page at a time (a store's rebuild of an inbox too big to hold); recountInboxIndex is it over
 * the whole inbox as one page.
 */
import { dedupKeyOf, editedKey, recalledKey, type DedupKey } from '../dedup-key.ts';
import { InternalError } from '../errors.ts';
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

/**
 * What a page's control entries name below the page (InboxRecount.targetsOf): the adapter
 * reads these entries before it folds the page.
 */
export interface RecountTargets {
  /** Seqs below the page's first entry: delete targets, the seqs of a read by seqs. */
  seqs: number[];
  /** Dedup keys of recall and edit targets (recalledKey, editedKey), wherever they are. */
  keys: DedupKey[];
}

/** The answers to RecountTargets. */
export interface RecountFound {
  /** The entry at each asked seq; absent: none there. */
  bySeq: ReadonlyMap<number, Entry>;
  /** The inbox's first entry (lowest seq) with each asked key; absent: none. */
  byKey: ReadonlyMap<DedupKey, Entry>;
}

/** A page's side-table items (InboxRecount.countItems), in seq order. */
export interface RecountItems {
  unread: UnreadItem[];
  /** conversationItemKeys. */
  visible: string[];
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
  const recount = new InboxRecount(self);
  recount.foldCursors(inbox, { bySeq, byKey });
  const items = recount.countItems(inbox);
  return {
    ...recount.counted(),
    unread: new Map(items.unread.map((item) => [conversationItemKey(item.convKey, item.seq), item])),
    visible: new Set(items.visible),
  };
}

/**
 * The recount a page at a time, for an inbox too big to hold (a store's rebuild): two passes
 * over the same pages in seq order. The first (foldCursors) moves every conversation's cursors
 * and collects what control entries hit — recalled, deleted and edited messages — given the
 * entries each page names below itself (targetsOf); the second (countItems), once the cursors
 * are final, hands out each page's unread and visible items and counts them into the records.
 * It holds the conversations and the messages control entries hit, never the entries.
 */
export class InboxRecount {
  private readonly cursors = new Map<string, Cursors>();
  private readonly recalled = new Set<number>();
  private readonly deleted = new Set<number>();
  private readonly edits = new Map<number, EditRef>();
  /** Built from the cursors when the second pass starts. */
  private records: Map<string, ConvRecord> | undefined;
  private folded = 0;
  private countedUpTo = 0;

  constructor(private readonly self: string) {}

  /** The entries that a page's control entries name and the page itself does not hold. */
  targetsOf(page: readonly Entry[]): RecountTargets {
    const first = page[0]?.seq ?? 0;
    const seqs = new Set<number>();
    const keys = new Set<DedupKey>();
    for (const e of page) {
      if (isActivity(e)) continue;
      if (e.kind === 'read' && !isConversationRead(e)) for (const seq of v1ReadSeqs(e)) if (seq < first) seqs.add(seq);
      if (e.kind === 'delete') for (const seq of deletedSeqsOf(e)) if (seq < first) seqs.add(seq);
      if (e.kind === 'recall' && e.recall !== undefined) keys.add(recalledKey(e.from, e.recall));
      if (e.kind === 'edit' && e.edit !== undefined) keys.add(editedKey(e.from, e.edit));
    }
    return { seqs: [...seqs], keys: [...keys] };
  }

  /**
   * First pass: one page (ascending seqs, each page above the last; a page holds every entry
   * between its first and last seq) with `found`, the answers to targetsOf(page).
   */
  foldCursors(page: readonly Entry[], found: RecountFound): void {
    this.ascending(page, this.folded, 'folded');
    if (this.records !== undefined) throw new InternalError('recount: a page folded after counting began');
    const bySeq = new Map(page.map((e) => [e.seq, e]));
    for (const e of page) this.foldOne(e, bySeq, found);
    this.folded = page.at(-1)?.seq ?? this.folded;
  }

  private foldOne(e: Entry, bySeq: ReadonlyMap<number, Entry>, found: RecountFound): void {
    const { cursors, self } = this;
    const touch = (conv: Entry['conv']): Cursors | undefined => {
      const c = cursors.get(conversationKey(conv));
      if (c !== undefined) c.asOfSeq = e.seq;
      return c;
    };
    const earlier = (seq: number): Entry | null => (seq < e.seq ? (bySeq.get(seq) ?? found.bySeq.get(seq) ?? null) : null);
    const earlierByKey = (key: DedupKey): Entry | null => {
      const t = found.byKey.get(key);
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
      return;
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
          this.recalled.add(t.seq);
          touch(t.conv);
        }
        break;
      }
      case 'edit': {
        touch(e.conv);
        const t = e.edit === undefined ? null : earlierByKey(editedKey(e.from, e.edit));
        if (e.edit !== undefined && editHits(e, t)) {
          if (editWins(this.edits.get(t.seq) ?? null, e.edit)) this.edits.set(t.seq, e.edit);
          touch(t.conv);
        }
        break;
      }
      case 'delete':
        for (const seq of deletedSeqsOf(e)) {
          const t = earlier(seq);
          if (t === null) continue;
          this.deleted.add(seq);
          if (isActivity(t)) touch(t.conv);
        }
        break;
      default:
        break;
    }
  }

  /**
   * Second pass, once every page was folded: the same pages again, in order. Returns the page's
   * unread and visible items and counts them (lastMsgSeq, unread, mentions) into the records.
   */
  countItems(page: readonly Entry[]): RecountItems {
    this.ascending(page, this.countedUpTo, 'counted');
    const records = (this.records ??= this.startRecords());
    const out: RecountItems = { unread: [], visible: [] };
    for (const t of page) {
      if (!isActivity(t) || this.deleted.has(t.seq) || this.recalled.has(t.seq)) continue;
      const key = conversationKey(t.conv);
      const rec = records.get(key);
      if (rec === undefined) throw new InternalError(`recount: seq ${t.seq} counted but never folded`);
      out.visible.push(conversationItemKey(key, t.seq));
      if (t.seq <= rec.clearedSeq) continue;
      rec.lastMsgSeq = Math.max(rec.lastMsgSeq, t.seq);
      if (t.seq <= rec.readSeq || !countsAsUnread(t, this.self)) continue;
      const mention = mentionsUser(t, this.self);
      out.unread.push({ convKey: key, seq: t.seq, mention });
      rec.unread++;
      if (mention) rec.mentions++;
    }
    this.countedUpTo = page.at(-1)?.seq ?? this.countedUpTo;
    return out;
  }

  /** The records (final once every page was counted), the deleted seqs and the edits shown. */
  counted(): Pick<InboxIndexState, 'records' | 'deleted' | 'edits'> {
    return { records: (this.records ??= this.startRecords()), deleted: this.deleted, edits: this.edits };
  }

  private startRecords(): Map<string, ConvRecord> {
    const records = new Map<string, ConvRecord>();
    for (const [key, c] of this.cursors) {
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
    return records;
  }

  private ascending(page: readonly Entry[], above: number, pass: string): void {
    let last = above;
    for (const e of page) {
      if (e.seq <= last) throw new InternalError(`recount: seq ${e.seq} ${pass} after seq ${last}`);
      last = e.seq;
    }
  }
}
