/** Inbox timelines on LMDB: a SeqLog per inbox plus the receipt state (readers) of entries. */
import type { Database } from 'lmdb';
import { NotFoundError, type AppendOutcome, type Entry, type InboxKey, type TimelineStore } from '@seqline/core';
import { SeqLog, type SeqKey } from './seq-log.ts';
import type { WriteBatcher } from './write-batcher.ts';

export class LmdbTimelineStore implements TimelineStore {
  constructor(
    private readonly log: SeqLog,
    private readonly readers: Database<string[], SeqKey>,
    private readonly writes: WriteBatcher,
  ) {}

  append(inbox: InboxKey, entries: Entry[]): Promise<AppendOutcome[]> {
    return this.log.append(inbox, entries);
  }

  findSeqs(inbox: InboxKey, appinfos: string[]): Promise<Map<string, number>> {
    return this.log.findSeqs(inbox, appinfos);
  }

  getEntry(inbox: InboxKey, seq: number): Promise<Entry | null> {
    return this.log.getEntry(inbox, seq);
  }

  readAfter(inbox: InboxKey, afterSeq: number, limit: number): Promise<Entry[]> {
    return this.log.readAfter(inbox, afterSeq, limit);
  }

  readBefore(inbox: InboxKey, beforeSeq: number, limit: number): Promise<Entry[]> {
    return this.log.readBefore(inbox, beforeSeq, limit);
  }

  headSeq(inbox: InboxKey): Promise<number> {
    return this.log.headSeq(inbox);
  }

  /**
   * Read-merge-write as one batched write: writes run one at a time inside the transaction,
   * so concurrent calls for the same entry each see the previous one's set (no lost update).
   */
  async addReaders(inbox: InboxKey, seq: number, readers: string[]): Promise<string[]> {
    return this.writes.run(() => {
      if (!this.log.hasEntry(inbox, seq)) throw new NotFoundError(`no entry ${seq} in ${inbox}`);
      const current = this.readers.get([inbox, seq]) ?? [];
      const union = [...new Set([...current, ...readers])].sort();
      if (union.length !== current.length) this.readers.put([inbox, seq], union);
      return union;
    });
  }

  async getReaders(inbox: InboxKey, seq: number): Promise<string[]> {
    return this.readers.get([inbox, seq]) ?? [];
  }
}
