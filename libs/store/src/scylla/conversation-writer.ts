/**
 * The write side of the conversation index on CQL. The inbox's owner (one writer per lease
 * term) runs it after an append's entries are durable: for each new entry in seq order, core's
 * indexEntryAsync with the facts read from CQL, then that entry's changes and the new watermark
 * in ONE logged batch — one mutation, since every index table is partitioned by inbox — so an
 * entry is indexed entirely or not at all. The index therefore never runs ahead of the entries,
 * and trails them only after a failure: a crash between the entries and their batch, an index
 * write that failed, or an owner that lost its lease. Whoever appends next to the inbox first
 * indexes the entries between the watermark and its own (the catch-up), so a new owner rebuilds
 * what its predecessor left undone on its first append.
 *
 * An index failure never fails the append (the entries are the truth): it is logged, the
 * watermark stays, and the next append catches up.
 */
import {
  indexEntryAsync,
  LruMap,
  splitKey,
  type AppendOutcome,
  type ConversationChanges,
  type Entry,
  type InboxKey,
  type Logger,
  type WriteGuard,
} from '@seqline/core';
import { num, storeError, writeTimestamp, type Cql, type Statement } from './cql.ts';
import { ConversationFactsReader, type InboxEntrySource } from './conversation-facts.ts';
import { changeStatements, conversationStatements, type ConversationStatements } from './conversation-tables.ts';
import { KeyedSerializer } from './keyed-serializer.ts';

/** Entries read per page while catching up. */
const CATCH_UP_PAGE = 500;

/** What this process last wrote as an inbox's watermark, under which writer term. */
interface KnownWatermark {
  term: string | undefined;
  seq: number;
}

export class ConversationIndexWriter {
  private readonly serializer = new KeyedSerializer();
  private readonly facts: ConversationFactsReader;
  /**
   * Saves the watermark read of an append. Trusted only under the term it was written in (a
   * takeover changes the term, see WriteGuard), and forgotten after any failure, whose batch may
   * or may not have landed. Only the watermark is remembered: records are always read.
   */
  private readonly known = new LruMap<string, KnownWatermark>(100_000);

  private readonly q: ConversationStatements;

  constructor(
    private readonly cql: Cql,
    private readonly source: InboxEntrySource,
    private readonly logger: Logger,
  ) {
    this.q = conversationStatements(cql);
    this.facts = new ConversationFactsReader(cql, this.q, source);
  }

  /**
   * Indexes the new entries of an append whose entries are durable (catching up first when the
   * watermark is below them). Resolves once they are indexed or the failure is logged; never rejects.
   */
  indexAppended(inbox: InboxKey, entries: readonly Entry[], outcomes: readonly AppendOutcome[], guard?: WriteGuard): Promise<void> {
    const fresh = entries.filter((entry, i) => outcomes[i]?.duplicate === false && outcomes[i]?.seq === entry.seq);
    const last = fresh.at(-1);
    if (last === undefined) return Promise.resolve();
    return this.serializer
      .run(inbox, async () => {
        const watermark = await this.watermark(inbox, guard?.term);
        if (watermark >= last.seq) return;
        const first = fresh[0] as Entry;
        // Entries between the watermark and this append (or only burnt seqs): read them from the inbox.
        if (watermark < first.seq - 1) await this.catchUpTo(inbox, watermark, last.seq, guard);
        else
          await this.apply(
            inbox,
            fresh.filter((entry) => entry.seq > watermark),
            guard,
          );
      })
      .catch((err: unknown) => this.failed(inbox, err));
  }

  /**
   * Indexes every stored entry past the watermark (a new owner may call it on takeover; the
   * admin rebuild compares against it). Resolves with the new watermark; rejects on failure.
   */
  catchUp(inbox: InboxKey, guard?: WriteGuard): Promise<number> {
    return this.serializer
      .run(inbox, async () => {
        const watermark = await this.watermark(inbox, guard?.term);
        return this.catchUpTo(inbox, watermark, Number.MAX_SAFE_INTEGER, guard);
      })
      .catch((err: unknown) => {
        this.failed(inbox, err);
        throw err;
      });
  }

  /** The inbox's watermark as stored (0 when nothing is indexed). */
  async storedWatermark(inbox: InboxKey): Promise<number> {
    const row = (await this.cql.read(this.q.watermark, [inbox])).first();
    return row === null ? 0 : num(row.get('seq'));
  }

  private async watermark(inbox: InboxKey, term: string | undefined): Promise<number> {
    const known = this.known.get(inbox);
    if (known !== undefined && known.term === term) return known.seq;
    const seq = await this.storedWatermark(inbox);
    this.known.set(inbox, { term, seq });
    return seq;
  }

  /** Applies the stored entries in (watermark, upTo], page by page; returns the new watermark. */
  private async catchUpTo(inbox: InboxKey, watermark: number, upTo: number, guard?: WriteGuard): Promise<number> {
    let after = watermark;
    for (;;) {
      const page = await this.source.readAfter(inbox, after, CATCH_UP_PAGE);
      const due = page.filter((entry) => entry.seq <= upTo);
      if (due.length > 0) {
        this.logger.info({ inbox, after, count: due.length }, 'conversation index catching up');
        await this.apply(inbox, due, guard);
        after = (due.at(-1) as Entry).seq;
      }
      if (page.length < CATCH_UP_PAGE || due.length < page.length) return after;
    }
  }

  /**
   * Indexes `entries` (seq order, all above the watermark), one batch each. An entry that
   * changes nothing (a receipt, a read of nothing) writes no batch of its own: its watermark
   * rides with the next batch, or is written alone at the end.
   */
  private async apply(inbox: InboxKey, entries: readonly Entry[], guard?: WriteGuard): Promise<void> {
    const self = splitKey(inbox).id;
    const answer = this.facts.answerFor(inbox);
    let unwritten: number | undefined;
    for (const entry of entries) {
      const changes = await indexEntryAsync(entry, self, answer);
      if (isEmpty(changes)) {
        unwritten = entry.seq;
        continue;
      }
      await this.write(inbox, changeStatements(this.q, inbox, changes, entry.seq), entry.seq, guard);
      unwritten = undefined;
    }
    if (unwritten !== undefined) await this.write(inbox, [{ query: this.q.setWatermark, params: [inbox, unwritten] }], unwritten, guard);
  }

  /**
   * One logged batch, fenced like the entries: the guard runs right before it and its timestamp
   * is taken right after, so a deposed owner's late batch is older than its successor's writes.
   */
  private async write(inbox: InboxKey, statements: Statement[], watermark: number, guard?: WriteGuard): Promise<void> {
    guard?.();
    const timestamp = writeTimestamp();
    try {
      await this.cql.client.batch(statements, { prepare: true, logged: true, isIdempotent: true, timestamp });
    } catch (err) {
      throw storeError(err);
    }
    this.known.set(inbox, { term: guard?.term, seq: watermark });
  }

  private failed(inbox: InboxKey, err: unknown): void {
    this.known.delete(inbox);
    this.logger.warn({ err, inbox }, 'conversation index update failed; the next append to the inbox catches up');
  }
}

function isEmpty(changes: ConversationChanges): boolean {
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
