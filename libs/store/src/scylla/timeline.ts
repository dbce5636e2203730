/**
 * Inbox timelines on CQL: a CqlSeqLog over `timeline` / `timeline_appinfos` / `inbox_buckets`, plus
 * the receipt state of entries in `timeline_readers` (a set per entry, kept apart from the
 * entry so getEntry returns it exactly as appended).
 */
import {
  InternalError,
  NotFoundError,
  type ConversationCatchUp,
  type ConversationRebuildReport,
  type DedupKey,
  type Entry,
  type InboxKey,
  type InboxEntryRef,
  type InboxPageAfter,
  type InboxPageBefore,
  type Logger,
  type StoredOutcome,
  type TimelineAppend,
  type TimelineStore,
  type WriteGuard,
  type EntryReaders,
} from '@seqline/core';
import { chunks, num, type Cql } from './cql.ts';
import type { InboxEntrySource } from './conversation-facts-reader.ts';
import { assertIndexable } from './conversation-tables.ts';
import { CqlConversationIndexWriter } from './conversation-writer.ts';
import { bucketOf, rowToEntry } from './entry-codec.ts';
import { CqlSeqLog } from './seq-log.ts';

export const TIMELINE_TABLES = { entries: 'timeline', appinfos: 'timeline_appinfos', buckets: 'inbox_buckets', key: 'inbox' };

export interface CqlTimelineOptions {
  /**
   * Keep the conversation index (conversation-writer.ts) after every append. Default true; off
   * only to measure what it costs.
   */
  indexConversations?: boolean;
  /**
   * How long entries live, in seconds: the `timeline` table's TTL, which openScyllaStores reads
   * from the schema (conversation-expiry.ts). The conversation index follows it. 0 (default):
   * entries never expire.
   */
  retentionSeconds?: number;
}

export class CqlTimelineStore implements TimelineStore, InboxEntrySource, ConversationCatchUp {
  private readonly log: CqlSeqLog;
  private readonly addReadersQuery: string;
  private readonly getReadersQuery: string;
  /** The conversation index's write side (undefined when turned off). */
  readonly conversations: CqlConversationIndexWriter | undefined;

  constructor(
    private readonly cql: Cql,
    private readonly logger: Logger,
    options: CqlTimelineOptions = {},
  ) {
    this.log = new CqlSeqLog(cql, TIMELINE_TABLES, logger);
    this.conversations =
      options.indexConversations === false
        ? undefined
        : new CqlConversationIndexWriter(cql, this, logger, { retentionSeconds: options.retentionSeconds ?? 0 });
    const readers = cql.table('timeline_readers');
    this.addReadersQuery = `UPDATE ${readers} SET readers = readers + ? WHERE inbox = ? AND bucket = ? AND seq = ?`;
    this.getReadersQuery = `SELECT readers FROM ${readers} WHERE inbox = ? AND bucket = ? AND seq = ?`;
  }

  /**
   * The entries, then the conversation index of the new ones (which never fails the append:
   * see CqlConversationIndexWriter). `durable` hears of the entries before the index is written,
   * `indexed` of the states that write left, `indexBehind` that it failed.
   */
  append({ inbox, entries, guard, durable, indexed, indexBehind }: TimelineAppend): Promise<StoredOutcome[]> {
    const index = this.conversations;
    if (index === undefined) return this.log.append(inbox, entries, guard);
    try {
      for (const entry of entries) assertIndexable(entry);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.log.append(inbox, entries, guard).then(async (outcomes) => {
      if (durable) this.tell(durable, outcomes);
      const written = await index.indexAppended(inbox, entries, outcomes, guard);
      if (written.failed) {
        if (indexBehind) this.tell(indexBehind, undefined);
      } else if (written.indexed !== undefined && indexed) this.tell(indexed, written.indexed);
      return outcomes;
    });
  }

  /** A listener's failure is its own: the append is durable whatever it does. */
  private tell<T>(listener: (value: T) => void, value: T): void {
    try {
      listener(value);
    } catch (err) {
      this.logger.warn({ err }, 'append listener threw');
    }
  }

  /**
   * Rebuilds the inbox's conversation index from the inbox, a page at a time
   * (conversation-rebuild.ts; core's ConversationRebuilder with a guard): run by the inbox's
   * owner, through the same writer as its appends' index writes, so it is serialised with them;
   * `guard` fences each of its writes (the owner's FencedTimelineStore passes the lease's).
   */
  rebuildConversations(input: { inbox: InboxKey; guard?: WriteGuard }): Promise<ConversationRebuildReport> {
    if (this.conversations === undefined) return Promise.reject(new InternalError('this timeline store keeps no conversation index'));
    return this.conversations.rebuild(input);
  }

  /**
   * Indexes the entries the inbox's conversation index trails (core's ConversationCatchUp), in
   * the same writer as its appends' index writes; `guard` fences each write (the owner's lease).
   */
  catchUpConversations(input: { inbox: InboxKey; guard?: WriteGuard }): Promise<number> {
    if (this.conversations === undefined) return Promise.reject(new InternalError('this timeline store keeps no conversation index'));
    return this.conversations.catchUp(input.inbox, input.guard);
  }

  /** The entries at these seqs (absent ones left out): one IN read per bucket. */
  async entriesAt(inbox: InboxKey, seqs: readonly number[]): Promise<Map<number, Entry>> {
    const byBucket = new Map<number, number[]>();
    for (const seq of new Set(seqs)) {
      if (!Number.isSafeInteger(seq) || seq < 1) continue;
      const list = byBucket.get(bucketOf(seq));
      if (list === undefined) byBucket.set(bucketOf(seq), [seq]);
      else list.push(seq);
    }
    const out = new Map<number, Entry>();
    await Promise.all(
      [...byBucket].flatMap(([bucket, list]) =>
        chunks(list, 100).map(async (part) => {
          for (const row of await this.cql.readAll(this.log.q.appinfosAt, [inbox, bucket, part]))
            out.set(num(row.get('seq')), rowToEntry(row));
        }),
      ),
    );
    return out;
  }

  findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    return this.log.findSeqs(input.inbox, input.keys);
  }

  getEntry({ inbox, seq }: InboxEntryRef): Promise<Entry | null> {
    return this.log.getEntry(inbox, seq);
  }

  readAfter({ inbox, afterSeq, limit }: InboxPageAfter): Promise<Entry[]> {
    return this.log.readAfter(inbox, afterSeq, limit);
  }

  readBefore({ inbox, beforeSeq, limit }: InboxPageBefore): Promise<Entry[]> {
    return this.log.readBefore(inbox, beforeSeq, limit);
  }

  headSeq(inbox: InboxKey): Promise<number> {
    return this.log.headSeq(inbox);
  }

  /**
   * A set addition is a commutative merge on the server: concurrent calls (from any process)
   * never lose each other's readers. The union is then read back at the same consistency, so
   * it contains at least this call's readers and every addition that completed before.
   */
  async addReaders({ inbox, seq, readers }: EntryReaders): Promise<string[]> {
    if (!(await this.log.hasEntry(inbox, seq))) throw new NotFoundError(`no entry ${seq} in ${inbox}`);
    const fresh = [...new Set(readers)];
    if (fresh.length > 0) await this.cql.write(this.addReadersQuery, [fresh, inbox, bucketOf(seq), seq]);
    return this.getReaders({ inbox, seq });
  }

  async getReaders({ inbox, seq }: InboxEntryRef): Promise<string[]> {
    if (!Number.isSafeInteger(seq) || seq < 1) return [];
    const row = (await this.cql.read(this.getReadersQuery, [inbox, bucketOf(seq), seq])).first();
    const readers: unknown = row?.get('readers');
    return Array.isArray(readers) ? readers.map(String).sort() : [];
  }
}
