/**
 * Core's FactsRequest answered with CQL reads, all of one round in parallel: records by IN,
 * entries through the timeline (its appinfo lookup and reads by seq), unread and visible items
 * by short range reads of one conversation, edits by IN. Read at the store's consistency
 * (LOCAL_QUORUM), after the previous entry's batch was acknowledged at the same level: each
 * entry sees the index as the entries before it left it.
 */
import {
  conversationItemKey,
  answersFor,
  type ConversationFacts,
  type DedupKey,
  type EditRef,
  type Entry,
  type FactsAnswerAsync,
  type FactsRequest,
  type InboxKey,
  type InboxPageAfter,
  type UnreadItem,
} from '@seqline/core';
import { chunks, num, type Cql } from './cql.ts';
import { parseEdit, rowToRecord, type ConversationStatements } from './conversation-tables.ts';

/** What the index reads of the inbox itself (the CQL timeline). */
export interface InboxEntrySource {
  /** key → the lowest live seq holding it (TimelineStore.findSeqs). */
  findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>>;
  /** The entries at these seqs; absent seqs are left out. */
  entriesAt(inbox: InboxKey, seqs: readonly number[]): Promise<Map<number, Entry>>;
  readAfter(input: InboxPageAfter): Promise<Entry[]>;
}

/** Keys per IN list. */
const IN_CHUNK = 100;

export class ConversationFactsReader {
  constructor(
    private readonly cql: Cql,
    private readonly q: ConversationStatements,
    private readonly source: InboxEntrySource,
  ) {}

  /** The answer function core's indexEntryAsync asks, for one inbox. */
  answerFor(inbox: InboxKey): FactsAnswerAsync {
    return (need, facts) => this.answer(inbox, need, facts);
  }

  /** Reads every fact of `need` into `facts`, all in parallel. */
  async answer(inbox: InboxKey, need: FactsRequest, facts: ConversationFacts): Promise<void> {
    await Promise.all([
      this.records(inbox, need.convKeys, facts),
      this.byKey(inbox, need.keys, facts),
      this.bySeq(inbox, need.seqs, facts),
      this.edits(inbox, need.edits, facts),
      ...need.unreadUpTo.map(({ convKey, upToSeq }) => this.unreadUpTo(inbox, convKey, upToSeq, facts)),
      this.unreadAt(inbox, need.unreadAt, facts),
      ...need.newestVisible.map(({ convKey, excluding }) => this.newestVisible(inbox, convKey, excluding, facts)),
    ]);
  }

  private async records(inbox: InboxKey, convKeys: string[], facts: ConversationFacts): Promise<void> {
    if (convKeys.length === 0) return;
    for (const key of convKeys) facts.records.set(key, null);
    const pages = await Promise.all(chunks(convKeys, IN_CHUNK).map((keys) => this.cql.readAll(this.q.recordsIn, [inbox, keys])));
    for (const row of pages.flat()) {
      const rec = rowToRecord(row);
      facts.records.set(String(row.get('conv_key')), rec);
    }
  }

  private async byKey(inbox: InboxKey, keys: DedupKey[], facts: ConversationFacts): Promise<void> {
    if (keys.length === 0) return;
    const seqs = await this.source.findSeqs({ inbox, keys });
    const entries = await this.source.entriesAt(inbox, [...seqs.values()]);
    for (const key of keys) {
      const seq = seqs.get(key);
      const entry = seq === undefined ? undefined : entries.get(seq);
      facts.byKey.set(key, entry !== undefined && answersFor(entry, key) ? entry : null);
    }
  }

  private async bySeq(inbox: InboxKey, seqs: number[], facts: ConversationFacts): Promise<void> {
    if (seqs.length === 0) return;
    const entries = await this.source.entriesAt(inbox, seqs);
    for (const seq of seqs) facts.bySeq.set(seq, entries.get(seq) ?? null);
  }

  private async edits(inbox: InboxKey, seqs: number[], facts: ConversationFacts): Promise<void> {
    if (seqs.length === 0) return;
    const found = await readEdits(this.cql, this.q, inbox, seqs);
    for (const seq of seqs) facts.edits.set(seq, found.get(seq) ?? null);
  }

  private async unreadUpTo(inbox: InboxKey, convKey: string, upToSeq: number, facts: ConversationFacts): Promise<void> {
    const rows = await this.cql.readAll(this.q.unreadUpTo, [inbox, convKey, Math.min(upToSeq, Number.MAX_SAFE_INTEGER)]);
    facts.unreadUpTo.set(
      convKey,
      rows.map((row): UnreadItem => ({ convKey, seq: num(row.get('seq')), mention: row.get('mention') === true })),
    );
  }

  private async unreadAt(inbox: InboxKey, items: FactsRequest['unreadAt'], facts: ConversationFacts): Promise<void> {
    if (items.length === 0) return;
    const byConv = new Map<string, number[]>();
    for (const { convKey, seq } of items) {
      facts.unreadAt.set(conversationItemKey(convKey, seq), null);
      byConv.set(convKey, [...(byConv.get(convKey) ?? []), seq]);
    }
    await Promise.all(
      [...byConv].flatMap(([convKey, seqs]) =>
        chunks(seqs, IN_CHUNK).map(async (list) => {
          for (const row of await this.cql.readAll(this.q.unreadAt, [inbox, convKey, list])) {
            const seq = num(row.get('seq'));
            facts.unreadAt.set(conversationItemKey(convKey, seq), { convKey, seq, mention: row.get('mention') === true });
          }
        }),
      ),
    );
  }

  /** The newest visible items, as many as could be excluded plus one: the first one left is the answer. */
  private async newestVisible(inbox: InboxKey, convKey: string, excluding: number[], facts: ConversationFacts): Promise<void> {
    const left = new Set(excluding);
    const rows = await this.cql.readAll(this.q.visibleNewest, [inbox, convKey, left.size + 1]);
    const newest = rows.map((row) => num(row.get('seq'))).find((seq) => !left.has(seq));
    facts.newestVisible.set(convKey, newest ?? null);
  }
}

/** seq → the edit shown, for those of `seqs` that have one. */
export async function readEdits(
  cql: Cql,
  q: ConversationStatements,
  inbox: InboxKey,
  seqs: readonly number[],
): Promise<Map<number, EditRef>> {
  const out = new Map<number, EditRef>();
  if (seqs.length === 0) return out;
  const pages = await Promise.all(chunks([...new Set(seqs)], IN_CHUNK).map((list) => cql.readAll(q.editsIn, [inbox, list])));
  for (const row of pages.flat()) {
    const seq = num(row.get('seq'));
    out.set(seq, parseEdit(String(row.get('edit')), seq));
  }
  return out;
}
