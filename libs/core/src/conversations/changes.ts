/**
 * The output of applying one inbox entry to the conversation index: new records and the rows
 * of the side tables to write or delete. Its size is O(items changed by the entry), never
 * O(conversation length): that is the cost of an update.
 */
import type { EditRef, Entry } from '../entry.ts';
import { InternalError } from '../errors.ts';
import { conversationItemKey, type ConvItem, type ConvRecord, type UnreadItem } from './rules.ts';

export interface RecordChange {
  /** The record before the entry (null: the conversation is new). Adapters re-key a list index by `before.lastSeq`. */
  before: ConvRecord | null;
  after: ConvRecord;
}

export interface ConversationChanges {
  /** The applied entry's seq: once these are persisted, the index is exact at it (the watermark). */
  seq: number;
  records: RecordChange[];
  unreadAdd: UnreadItem[];
  unreadRemove: UnreadItem[];
  visibleAdd: ConvItem[];
  visibleRemove: ConvItem[];
  /** Seqs deleted for the inbox owner: hidden from sync, history and conversations (idempotent puts). */
  deleted: number[];
  /** The edit now shown for a message seq (replaces the stored one). */
  edits: Array<{ seq: number; edit: EditRef }>;
}

/** Collects the changes of one entry; records are copied on first touch, never mutated in place. */
export class ChangeBuilder {
  private readonly open = new Map<string, RecordChange>();
  private readonly unreadRemoved = new Set<string>();
  readonly unreadAdd: UnreadItem[] = [];
  readonly unreadRemove: UnreadItem[] = [];
  readonly visibleAdd: ConvItem[] = [];
  readonly visibleRemove: ConvItem[] = [];
  readonly deleted: number[] = [];
  readonly edits: Array<{ seq: number; edit: EditRef }> = [];

  constructor(readonly entry: Entry) {}

  /**
   * The working copy of a conversation's record, its asOfSeq set to this entry (it is touched).
   * A record already at or past this entry means the index is being applied out of order or
   * twice; applying again would count twice, so it is refused.
   */
  touch(convKey: string, before: ConvRecord | null, create: ConvRecord): ConvRecord {
    const known = this.open.get(convKey);
    if (known !== undefined) return known.after;
    if (before !== null && before.asOfSeq >= this.entry.seq) {
      throw new InternalError(`conversation ${convKey} is at seq ${before.asOfSeq}; cannot apply seq ${this.entry.seq}`);
    }
    const after: ConvRecord = before === null ? create : { ...before, conv: { ...before.conv } };
    after.asOfSeq = this.entry.seq;
    this.open.set(convKey, { before, after });
    return after;
  }

  addUnread(rec: ConvRecord, item: UnreadItem): void {
    this.unreadAdd.push(item);
    rec.unread++;
    if (item.mention) rec.mentions++;
  }

  removeUnread(rec: ConvRecord, item: UnreadItem): void {
    const key = conversationItemKey(item.convKey, item.seq);
    if (this.unreadRemoved.has(key)) return;
    this.unreadRemoved.add(key);
    this.unreadRemove.push(item);
    rec.unread--;
    if (item.mention) rec.mentions--;
  }

  /** Removes every item of `items` at or below `upToSeq`. */
  removeUnreadUpTo(rec: ConvRecord, items: readonly UnreadItem[], upToSeq: number): void {
    for (const item of items) if (item.seq <= upToSeq) this.removeUnread(rec, item);
  }

  build(): ConversationChanges {
    const records = [...this.open.values()];
    for (const { after } of records) {
      if (after.unread < 0 || after.mentions < 0 || after.mentions > after.unread) {
        throw new InternalError(`conversation index drifted: unread ${after.unread}, mentions ${after.mentions}`);
      }
    }
    return {
      seq: this.entry.seq,
      records,
      unreadAdd: this.unreadAdd,
      unreadRemove: this.unreadRemove,
      visibleAdd: this.visibleAdd,
      visibleRemove: this.visibleRemove,
      deleted: this.deleted,
      edits: this.edits,
    };
  }
}
