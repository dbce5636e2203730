/**
 * What the conversation index needs to know besides the entry being applied, and the lookup
 * helper that records what is still missing. No I/O here: the adapter answers a FactsRequest
 * from its store (inside the LMDB write transaction, or with CQL reads by the inbox's owner).
 */
import type { DedupKey } from '../dedup-key.ts';
import type { EditRef, Entry } from '../entry.ts';
import { conversationItemKey, type ConvRecord, type UnreadItem } from './rules.ts';

/**
 * Lookups an adapter makes before an entry can be applied. Each is a point read or one short
 * range read of an index; none scans a conversation.
 */
export interface FactsRequest {
  /** Records of these conversations (null when the conversation has none yet). */
  convKeys: string[];
  /** The entries of this inbox with these dedup keys (recall and edit targets: recalledKey, editedKey). */
  keys: DedupKey[];
  /** The entries of this inbox with these seqs (delete targets, the seqs of a read by seqs). */
  seqs: number[];
  /** The edit currently shown for these message seqs. */
  edits: number[];
  /** Every unread item of `convKey` with seq <= upToSeq (the ones a read or clear removes). */
  unreadUpTo: Array<{ convKey: string; upToSeq: number }>;
  /** Whether (convKey, seq) is an unread item. */
  unreadAt: Array<{ convKey: string; seq: number }>;
  /** The highest seq among the visible items of `convKey`, leaving out `excluding`. */
  newestVisible: Array<{ convKey: string; excluding: number[] }>;
}

/** The answers, filled in by the adapter across rounds; absent = not asked yet. */
export interface ConversationFacts {
  records: Map<string, ConvRecord | null>;
  byKey: Map<DedupKey, Entry | null>;
  bySeq: Map<number, Entry | null>;
  edits: Map<number, EditRef | null>;
  /** By convKey: one range per conversation per entry. */
  unreadUpTo: Map<string, UnreadItem[]>;
  /** By conversationItemKey(convKey, seq). */
  unreadAt: Map<string, UnreadItem | null>;
  /** By convKey. */
  newestVisible: Map<string, number | null>;
}

export function emptyFacts(): ConversationFacts {
  return {
    records: new Map(),
    byKey: new Map(),
    bySeq: new Map(),
    edits: new Map(),
    unreadUpTo: new Map(),
    unreadAt: new Map(),
    newestVisible: new Map(),
  };
}

export function emptyFactsRequest(): FactsRequest {
  return { convKeys: [], keys: [], seqs: [], edits: [], unreadUpTo: [], unreadAt: [], newestVisible: [] };
}

export function isEmptyRequest(r: FactsRequest): boolean {
  return (
    r.convKeys.length +
      r.keys.length +
      r.seqs.length +
      r.edits.length +
      r.unreadUpTo.length +
      r.unreadAt.length +
      r.newestVisible.length ===
    0
  );
}

/**
 * Reads facts; a missing one answers undefined and is added to `missing`, once. The planner
 * asks for everything it can before giving up on a round, so adapters make few rounds.
 */
export class FactLookup {
  readonly missing: FactsRequest = emptyFactsRequest();
  private readonly asked = new Set<string>();

  constructor(private readonly facts: ConversationFacts) {}

  private ask(tag: string): boolean {
    if (this.asked.has(tag)) return false;
    this.asked.add(tag);
    return true;
  }

  record(convKey: string): ConvRecord | null | undefined {
    const v = this.facts.records.get(convKey);
    if (v === undefined && this.ask(`r\n${convKey}`)) this.missing.convKeys.push(convKey);
    return v;
  }

  entryByKey(key: DedupKey): Entry | null | undefined {
    const v = this.facts.byKey.get(key);
    if (v === undefined && this.ask(`a\n${key}`)) this.missing.keys.push(key);
    return v;
  }

  entryBySeq(seq: number): Entry | null | undefined {
    const v = this.facts.bySeq.get(seq);
    if (v === undefined && this.ask(`s\n${seq}`)) this.missing.seqs.push(seq);
    return v;
  }

  edit(seq: number): EditRef | null | undefined {
    const v = this.facts.edits.get(seq);
    if (v === undefined && this.ask(`e\n${seq}`)) this.missing.edits.push(seq);
    return v;
  }

  unreadUpTo(convKey: string, upToSeq: number): UnreadItem[] | undefined {
    const v = this.facts.unreadUpTo.get(convKey);
    if (v === undefined && this.ask(`u\n${convKey}`)) this.missing.unreadUpTo.push({ convKey, upToSeq });
    return v;
  }

  unreadAt(convKey: string, seq: number): UnreadItem | null | undefined {
    const key = conversationItemKey(convKey, seq);
    const v = this.facts.unreadAt.get(key);
    if (v === undefined && this.ask(`i\n${key}`)) this.missing.unreadAt.push({ convKey, seq });
    return v;
  }

  newestVisible(convKey: string, excluding: number[]): number | null | undefined {
    const v = this.facts.newestVisible.get(convKey);
    if (v === undefined && this.ask(`v\n${convKey}`)) this.missing.newestVisible.push({ convKey, excluding });
    return v;
  }
}
