/**
 * What one index write of the CQL writer tells its append's caller (TimelineAppend.indexed):
 * the record of every conversation the applied entries changed, as written, and its `last` when
 * the writer held that entry — one it applied, or one the rules looked up (an edit's target) —
 * with the edit shown for it. A `last` it did not hold (a read leaves it an older message, never
 * looked at) stays absent: reading it is the caller's choice, not a cost of every append.
 */
import {
  conversationKey,
  withLatestEdit,
  type ConversationChanges,
  type ConversationFacts,
  type ConvRecord,
  type EditRef,
  type Entry,
  type IndexedConversations,
  type IndexedState,
} from '@seqline/core';

export class IndexedCollector {
  private readonly records = new Map<string, ConvRecord>();
  /** Entries at hand: those applied, and those the rules looked up. */
  private readonly entries = new Map<number, Entry>();
  /** Seqs applied by this write: no edit of them is stored but the ones this write made. */
  private readonly applied = new Set<number>();
  /** The edit shown for a seq, where known: read as a fact, or made by an applied entry. */
  private readonly edits = new Map<number, EditRef | null>();
  private watermark = 0;

  /** After core's facts for an entry were answered (reads included), before its changes. */
  learn(facts: ConversationFacts): void {
    for (const entry of facts.bySeq.values()) if (entry !== null) this.entries.set(entry.seq, entry);
    for (const entry of facts.byKey.values()) if (entry !== null) this.entries.set(entry.seq, entry);
    for (const [seq, edit] of facts.edits) this.edits.set(seq, edit);
  }

  /** An entry applied, in seq order, with its changes. */
  apply(entry: Entry, changes: ConversationChanges): void {
    this.entries.set(entry.seq, entry);
    this.applied.add(entry.seq);
    for (const { after } of changes.records) this.records.set(conversationKey(after.conv), after);
    for (const { seq, edit } of changes.edits) this.edits.set(seq, edit);
    this.watermark = entry.seq;
  }

  /** Undefined when nothing was applied. */
  result(): IndexedConversations | undefined {
    if (this.watermark === 0) return undefined;
    return { watermark: this.watermark, states: [...this.records.values()].map((rec) => this.state(rec)) };
  }

  private state(rec: ConvRecord): IndexedState {
    const seq = rec.lastMsgSeq;
    if (seq === 0) return { ...rec, last: null };
    const entry = this.entries.get(seq);
    const edit = this.edits.has(seq) ? (this.edits.get(seq) as EditRef | null) : this.applied.has(seq) ? null : undefined;
    if (entry === undefined || edit === undefined) return { ...rec };
    return { ...rec, last: withLatestEdit(entry, edit) };
  }
}
