/**
 * The write side of the conversation index on CQL. The inbox's owner (one writer per lease
 * term) runs it after an append's entries are durable: for each new entry in seq order, core's
 * indexEntryAsync with its facts, then the changes of a run of entries and the new watermark
 * in ONE write — one mutation, since every index table is partitioned by inbox — so a run is
 * indexed entirely or not at all. The index therefore never runs ahead of the entries, and
 * trails them only after a failure: a crash between the entries and their index write, an index
 * write that failed, or an owner that lost its lease. Whoever appends next to the inbox first
 * indexes the entries between the watermark and its own (the catch-up), so a new owner rebuilds
 * what its predecessor left undone on its first append. A rebuild cut off half-way leaves a
 * sentinel instead of a watermark, and the catch-up redoes that rebuild (conversation-rebuild.ts).
 *
 * What makes it cheap (docs/decisions.md, "Conversation index on CQL"): the writer remembers
 * each inbox's watermark and records under its term (conversation-memory.ts), so a message
 * needs no read; entries whose facts all come from memory are merged into one write, and a fact
 * that must be read first writes what is pending (reads see the index as the entries before
 * left it); the writes of many inboxes share batches (conversation-commit.ts).
 *
 * An index failure never fails the append (the entries are the truth): it is logged, the
 * watermark stays, and the append says so (IndexWrite.failed), so that the inbox's owner
 * schedules a catch-up (`catchUp`); the next append catches up too.
 *
 * With a retention (the timeline's TTL), the index follows it: before an append is indexed, the
 * index is moved to the inbox's expiry horizon when that moved (conversation-expiry.ts), and
 * every record written is kept at the horizon (core's changesAtHorizon).
 */
import {
  KeyedQueue,
  type AppendOutcome,
  type ConversationRebuildReport,
  type Entry,
  type InboxKey,
  type IndexedConversations,
  type Logger,
  type WriteGuard,
} from '@seqline/core';
import type { Cql } from './cql.ts';
import { applyEntries, type ApplyDeps } from './conversation-apply.ts';
import { IndexWriteBatcher } from './conversation-commit.ts';
import { expiryStep, moveHorizon, type ExpiryDeps } from './conversation-expiry.ts';
import { IndexedCollector } from './conversation-indexed.ts';
import { ConversationFactsReader, type InboxEntrySource } from './conversation-facts-reader.ts';
import { ConversationMemory, type InboxMemory } from './conversation-memory.ts';
import { rebuildInboxIndex, type RebuildDeps, type RebuildInput } from './conversation-rebuild.ts';
import { conversationStatements, readWatermark, type ConversationStatements } from './conversation-tables.ts';

/** Entries read per page while catching up. */
const CATCH_UP_PAGE = 500;

export interface ConversationIndexWriterOptions {
  /** How long entries live, in seconds (the timeline's TTL); 0 (default): forever, no expiry. */
  retentionSeconds?: number;
  /** Entries per read of the inbox in a catch-up or a rebuild, rows per page of a rebuild's index read (defaults: the modules'). */
  pageSize?: number;
}

/** What an append's index write did: the states it left, or that it failed (the index trails the entries). */
export type IndexWrite = { failed: false; indexed: IndexedConversations | undefined } | { failed: true };

const NOTHING_INDEXED: IndexWrite = { failed: false, indexed: undefined };
const FAILED: IndexWrite = { failed: true };

export class CqlConversationIndexWriter {
  private readonly serializer = new KeyedQueue();
  private readonly facts: ConversationFactsReader;
  private readonly memory = new ConversationMemory();
  private readonly batcher: IndexWriteBatcher;
  private readonly q: ConversationStatements;
  private readonly retentionSeconds: number;
  private readonly pageSize: number | undefined;

  constructor(
    private readonly cql: Cql,
    private readonly source: InboxEntrySource,
    private readonly logger: Logger,
    options: ConversationIndexWriterOptions = {},
  ) {
    this.retentionSeconds = options.retentionSeconds ?? 0;
    this.pageSize = options.pageSize;
    this.q = conversationStatements(cql, this.retentionSeconds);
    this.facts = new ConversationFactsReader(cql, this.q, source);
    this.batcher = new IndexWriteBatcher(cql);
  }

  /**
   * Indexes the new entries of an append whose entries are durable (catching up first when the
   * watermark is below them). Resolves once they are indexed, with the states this write left
   * the conversations it touched (IndexedCollector; undefined when there was nothing to index),
   * or once the failure is logged, as failed; never rejects.
   */
  indexAppended(inbox: InboxKey, entries: readonly Entry[], outcomes: readonly AppendOutcome[], guard?: WriteGuard): Promise<IndexWrite> {
    const fresh = entries.filter((entry, i) => outcomes[i]?.duplicate === false && outcomes[i]?.seq === entry.seq);
    const last = fresh.at(-1);
    if (last === undefined) return this.catchUpUnknown(inbox, guard);
    return this.serializer
      .run(inbox, async (): Promise<IndexWrite> => {
        const mem = await this.followExpiry(inbox, await this.remembered(inbox, guard), guard);
        if (mem.watermark >= last.seq) return NOTHING_INDEXED;
        const first = fresh[0] as Entry;
        const collected = new IndexedCollector();
        // Entries between the watermark and this append (or only burnt seqs): read them from the inbox.
        if (mem.watermark < first.seq - 1) await this.catchUpTo(inbox, mem, last.seq, guard, collected);
        else
          await applyEntries(
            this.applyDeps(),
            inbox,
            mem,
            fresh.filter((entry) => entry.seq > mem.watermark),
            guard,
            collected,
          );
        return { failed: false, indexed: collected.result() };
      })
      .catch((err: unknown) => {
        this.failed(inbox, err);
        return FAILED;
      });
  }

  /**
   * An append of duplicates only: nothing new to index. But a writer that does not know the
   * inbox yet (a new owner, or after a failure) may be its first appender since a predecessor
   * left the index behind, and "whoever appends next catches up" holds for a resend too.
   */
  private catchUpUnknown(inbox: InboxKey, guard?: WriteGuard): Promise<IndexWrite> {
    if (this.memory.get(inbox, guard?.term) !== undefined) return Promise.resolve(NOTHING_INDEXED);
    return this.serializer
      .run(inbox, async () => {
        await this.catchUpTo(inbox, await this.remembered(inbox, guard), Number.MAX_SAFE_INTEGER, guard);
        return NOTHING_INDEXED;
      })
      .catch((err: unknown) => {
        this.failed(inbox, err);
        return FAILED;
      });
  }

  /**
   * Indexes every stored entry past the watermark: the owner's catch-up after a failed index
   * write, and a new owner's of the inboxes its predecessor left behind. Resolves with the new
   * watermark; rejects on failure.
   */
  catchUp(inbox: InboxKey, guard?: WriteGuard): Promise<number> {
    return this.serializer
      .run(inbox, async () => this.catchUpTo(inbox, await this.remembered(inbox, guard), Number.MAX_SAFE_INTEGER, guard))
      .catch((err: unknown) => {
        this.failed(inbox, err);
        throw err;
      });
  }

  /**
   * Replaces the inbox's index with the recount of the whole inbox (conversation-rebuild.ts),
   * serialised with its index writes and fenced by `guard`. What this writer remembered of the
   * inbox is dropped before and after: the next append reads the rebuilt index.
   */
  rebuild({ inbox, guard }: RebuildInput): Promise<ConversationRebuildReport> {
    return this.serializer
      .run(inbox, async () => {
        this.memory.forget(inbox);
        const report = await rebuildInboxIndex(this.rebuildDeps(), { inbox, guard });
        this.memory.forget(inbox);
        return report;
      })
      .catch((err: unknown) => {
        this.failed(inbox, err);
        throw err;
      });
  }

  /**
   * The inbox's memory under this term, or a fresh one at the stored watermark. A rebuild's
   * sentinel there means a rebuild was cut off and the rows are half its recount: counting on
   * top of them would count twice, so the rebuild is redone first (it reads every stored entry,
   * the caller's own included) and the memory starts at its head.
   */
  private async remembered(inbox: InboxKey, guard: WriteGuard | undefined): Promise<InboxMemory> {
    const held = this.memory.get(inbox, guard?.term);
    if (held !== undefined) return held;
    const stored = await readWatermark(this.cql, this.q, inbox);
    if (!stored.rebuilding) return this.memory.start(inbox, guard?.term, stored.seq, stored);
    this.logger.warn({ inbox }, 'conversation index: a rebuild was cut off; redoing it before indexing');
    const report = await rebuildInboxIndex(this.rebuildDeps(), { inbox, guard });
    return this.memory.start(inbox, guard?.term, report.headSeq, await readWatermark(this.cql, this.q, inbox));
  }

  /**
   * Moves the index to the inbox's expiry horizon when that moved (conversation-expiry.ts), or
   * rebuilds it when it was left alone longer than the retention; `mem` as the store is then.
   */
  private async followExpiry(inbox: InboxKey, mem: InboxMemory, guard: WriteGuard | undefined): Promise<InboxMemory> {
    const now = Date.now();
    const step = await expiryStep(this.expiryDeps(), inbox, mem, now);
    if (step.kind === 'none') return mem;
    if (step.kind === 'move') {
      const expiry = await moveHorizon(this.expiryDeps(), inbox, mem, {
        oldest: step.oldest,
        now,
        write: (statements) => this.batcher.write(statements, guard),
      });
      this.memory.touched(inbox, mem);
      this.logger.debug(
        { inbox, horizon: step.oldest.seq, dropped: expiry.dropped.length },
        'conversation index moved to its expiry horizon',
      );
      return mem;
    }
    this.logger.info({ inbox }, 'conversation index: rows of expired entries may be gone uncounted; rebuilding');
    this.memory.forget(inbox);
    await rebuildInboxIndex(this.rebuildDeps(), { inbox, guard });
    return this.remembered(inbox, guard);
  }

  private rebuildDeps(): RebuildDeps {
    const { cql, q, source, logger, retentionSeconds, pageSize } = this;
    return { cql, q, source, logger, retentionSeconds, pageSize };
  }

  private expiryDeps(): ExpiryDeps {
    return { cql: this.cql, q: this.q, source: this.source, retentionSeconds: this.retentionSeconds };
  }

  private applyDeps(): ApplyDeps {
    const { q, batcher, facts, memory } = this;
    return { q, batcher, facts, memory };
  }

  /** Applies the stored entries in (watermark, upTo], page by page; returns the new watermark. */
  private async catchUpTo(
    inbox: InboxKey,
    mem: InboxMemory,
    upTo: number,
    guard?: WriteGuard,
    collected?: IndexedCollector,
  ): Promise<number> {
    let after = mem.watermark;
    const pageSize = this.pageSize ?? CATCH_UP_PAGE;
    for (;;) {
      const page = await this.source.readAfter({ inbox, afterSeq: after, limit: pageSize });
      const due = page.filter((entry) => entry.seq <= upTo);
      if (due.length > 0) {
        this.logger.info({ inbox, after, count: due.length }, 'conversation index catching up');
        await applyEntries(this.applyDeps(), inbox, mem, due, guard, collected);
        after = (due.at(-1) as Entry).seq;
      }
      if (page.length < pageSize || due.length < page.length) return after;
    }
  }

  private failed(inbox: InboxKey, err: unknown): void {
    this.memory.forget(inbox);
    this.logger.warn({ err, inbox }, 'conversation index update failed; a catch-up or the next append to the inbox indexes the entries');
  }
}
