/**
 * What the CQL index writer remembers of an inbox between appends, so that a message costs no
 * read: the watermark and the records of the conversations it has read or written. Like the seq
 * log's writer state (writer-state.ts) it is trusted only under the writer term it was learnt in
 * (a takeover changes the term, see WriteGuard), and forgotten after any failure — a batch that
 * failed may or may not have landed. Bounded in records across all inboxes (least recently used
 * inboxes go first).
 *
 * And the merge of consecutive entries' changes into one batch: every statement of a batch has
 * one timestamp, and Cassandra resolves a tie between two writes of one cell by value, not by
 * order, so a merged change writes each record and edit once (the last), never twice.
 */
import {
  conversationKey,
  LruMap,
  type ConversationChanges,
  type ConversationFacts,
  type ConvRecord,
  type FactsRequest,
  type RecordChange,
} from '@seqline/core';
import type { ExpiryCells, StoredWatermark } from './conversation-tables.ts';

export interface InboxMemory {
  term: string | undefined;
  /** The watermark as stored (what the last successful index write set). */
  watermark: number;
  /** Records by conversation key, as the index holds them once the pending changes land; null: none. */
  records: Map<string, ConvRecord | null>;
  /** The expiry horizon as stored (conversation-expiry.ts): records are kept at it. */
  horizon: StoredHorizon;
  /** When this writer last looked for a new horizon (ms); undefined: not under this term. */
  checkedAt: number | undefined;
  /** Expiry cells the next index write stores with the watermark (a move that changed no row, a first seq). */
  pendingCells: ExpiryCells | undefined;
}

/** The expiry cells of an inbox's watermark row (StoredWatermark). */
export type StoredHorizon = Pick<StoredWatermark, 'horizon' | 'oldestAt' | 'firstSeq' | 'horizonWrittenAt'>;

/** Records held across all inboxes (≈ 200 bytes each): about 40 MiB at most. */
const MAX_HELD_RECORDS = 200_000;
/** An inbox holding more records than this starts over (its most active conversations come back first). */
const MAX_RECORDS_PER_INBOX = 20_000;

export class ConversationMemory {
  private readonly held: LruMap<string, InboxMemory>;

  constructor(maxRecords = MAX_HELD_RECORDS) {
    this.held = new LruMap<string, InboxMemory>(maxRecords, (mem) => 1 + mem.records.size);
  }

  /** The inbox's memory if this writer term holds it. */
  get(inbox: string, term: string | undefined): InboxMemory | undefined {
    const mem = this.held.get(inbox);
    if (mem === undefined || mem.term === term) return mem;
    this.held.delete(inbox);
    return undefined;
  }

  /** A fresh memory of the inbox at a watermark (and horizon) just read from the store. */
  start(inbox: string, term: string | undefined, watermark: number, horizon: StoredHorizon): InboxMemory {
    const { horizon: seq, oldestAt, firstSeq, horizonWrittenAt } = horizon;
    const mem: InboxMemory = {
      term,
      watermark,
      records: new Map(),
      horizon: { horizon: seq, oldestAt, firstSeq, horizonWrittenAt },
      checkedAt: undefined,
      pendingCells: undefined,
    };
    this.held.set(inbox, mem);
    return mem;
  }

  /** After the records changed size: re-weighs the inbox (and evicts others if over the bound). */
  touched(inbox: string, mem: InboxMemory): void {
    if (mem.records.size > MAX_RECORDS_PER_INBOX) mem.records.clear();
    if (this.held.get(inbox) === mem) this.held.set(inbox, mem);
  }

  forget(inbox: string): void {
    this.held.delete(inbox);
  }
}

/**
 * Fills `facts` with what `mem` knows and returns what is still to be read: records it holds,
 * and the unread items of a conversation whose record counts none (no unread row exists then:
 * a record's `unread` is its number of rows in conv_unread).
 */
export function answerFromMemory(mem: InboxMemory, need: FactsRequest, facts: ConversationFacts): FactsRequest {
  const convKeys: string[] = [];
  for (const key of need.convKeys) {
    const rec = mem.records.get(key);
    if (rec === undefined) convKeys.push(key);
    else facts.records.set(key, rec);
  }
  const unreadUpTo: FactsRequest['unreadUpTo'] = [];
  for (const want of need.unreadUpTo) {
    const rec = mem.records.get(want.convKey);
    if (rec === null || rec?.unread === 0) facts.unreadUpTo.set(want.convKey, []);
    else unreadUpTo.push(want);
  }
  return { ...need, convKeys, unreadUpTo };
}

/** Remembers the records just read for `convKeys` (null for those that have none). */
export function learnRecords(mem: InboxMemory, convKeys: readonly string[], facts: ConversationFacts): void {
  for (const key of convKeys) {
    const rec = facts.records.get(key);
    if (rec !== undefined) mem.records.set(key, rec);
  }
}

/** Remembers the records as `changes` leave them (before they are written: a failed write forgets the inbox). */
export function learnChanges(mem: InboxMemory, changes: ConversationChanges): void {
  for (const { after } of changes.records) mem.records.set(conversationKey(after.conv), after);
}

export function changesNothing(changes: ConversationChanges): boolean {
  return (
    changes.records.length +
      changes.unreadAdd.length +
      changes.unreadRemove.length +
      changes.visibleAdd.length +
      changes.visibleRemove.length +
      changes.deleted.length +
      changes.edits.length ===
    0
  );
}

/**
 * The net changes of consecutive entries (seq order), as one batch writes them: per record the
 * first `before` and the last `after` (so the list row is re-keyed once, intermediate rows are
 * never written), per edited message the last edit; item rows concatenated — an item added and
 * removed in the run is written and deleted with one timestamp, and a tombstone wins the tie.
 */
export function mergeChanges(runs: readonly ConversationChanges[]): ConversationChanges {
  const [first] = runs;
  if (runs.length === 1 && first !== undefined) return first;
  const records = new Map<string, RecordChange>();
  const edits = new Map<number, ConversationChanges['edits'][number]>();
  const out: ConversationChanges = {
    seq: runs.at(-1)?.seq ?? 0,
    records: [],
    unreadAdd: [],
    unreadRemove: [],
    visibleAdd: [],
    visibleRemove: [],
    deleted: [],
    edits: [],
  };
  for (const c of runs) {
    for (const change of c.records) {
      const key = conversationKey(change.after.conv);
      const known = records.get(key);
      records.set(key, { before: known === undefined ? change.before : known.before, after: change.after });
    }
    for (const edit of c.edits) edits.set(edit.seq, edit);
    out.unreadAdd.push(...c.unreadAdd);
    out.unreadRemove.push(...c.unreadRemove);
    out.visibleAdd.push(...c.visibleAdd);
    out.visibleRemove.push(...c.visibleRemove);
    out.deleted.push(...c.deleted);
  }
  out.records = [...records.values()];
  out.edits = [...edits.values()];
  return out;
}
