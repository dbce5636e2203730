/** Inbox timelines on LMDB: a SeqLog per inbox plus the receipt state (readers) of entries. */
import type { Database } from 'lmdb';
import {
  NotFoundError,
  type DedupKey,
  type Entry,
  type InboxKey,
  type InboxEntryRef,
  type InboxPageAfter,
  type InboxPageBefore,
  type IndexedConversations,
  type Logger,
  type StoredOutcome,
  type TimelineAppend,
  type TimelineStore,
  type EntryReaders,
} from '@seqline/core';
import { SeqLog, type SeqKey } from './seq-log.ts';
import type { WriteBatcher } from './write-batcher.ts';

export class LmdbTimelineStore implements TimelineStore {
  constructor(
    private readonly log: SeqLog<IndexedConversations>,
    private readonly readers: Database<string[], SeqKey>,
    private readonly writes: WriteBatcher,
    private readonly logger: Logger,
  ) {}

  /**
   * Entries and conversation index commit in one transaction: `indexed` hears the states the
   * index writer computed in it (there is no moment at which the entries are durable and the
   * index not, so `durable` is never told apart). One writer per process: no guard to run.
   */
  async append({ inbox, entries, indexed }: TimelineAppend): Promise<StoredOutcome[]> {
    const { outcomes, derived } = await this.log.appendDerived(inbox, entries, indexed !== undefined);
    if (derived !== undefined && indexed !== undefined) tell(indexed, derived, this.logger);
    return outcomes;
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
   * Read-merge-write as one batched write: writes run one at a time inside the transaction,
   * so concurrent calls for the same entry each see the previous one's set (no lost update).
   */
  async addReaders({ inbox, seq, readers }: EntryReaders): Promise<string[]> {
    return this.writes.run(() => {
      if (!this.log.hasEntry(inbox, seq)) throw new NotFoundError(`no entry ${seq} in ${inbox}`);
      const current = this.readers.get([inbox, seq]) ?? [];
      const union = [...new Set([...current, ...readers])].sort();
      if (union.length !== current.length) this.readers.put([inbox, seq], union);
      return union;
    });
  }

  async getReaders({ inbox, seq }: InboxEntryRef): Promise<string[]> {
    return this.readers.get([inbox, seq]) ?? [];
  }
}

/** A listener's failure is its own: the append is committed whatever it does. */
function tell<T>(listener: (value: T) => void, value: T, logger: Logger): void {
  try {
    listener(value);
  } catch (err) {
    logger.warn({ err }, 'append listener threw');
  }
}
