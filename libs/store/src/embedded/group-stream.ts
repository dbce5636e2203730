/** Read-fanout group streams on LMDB: a SeqLog per group plus per-member read cursors. */
import type { Database } from 'lmdb';
import {
  BadRequestError,
  type DedupKey,
  type Entry,
  type GroupKey,
  type GroupPageAfter,
  type GroupPageBefore,
  type GroupStreamAppend,
  type GroupStreamStore,
  type InboxKey,
  type StoredOutcome,
  type GroupCursor,
  type GroupCursorRef,
} from '@seqline/core';
import { MAX_KEY_STRING } from './keys.ts';
import type { SeqLog } from './seq-log.ts';
import type { WriteBatcher } from './write-batcher.ts';

export class LmdbGroupStreamStore implements GroupStreamStore {
  constructor(
    private readonly log: SeqLog,
    private readonly cursors: Database<number, [group: string, inbox: string]>,
    private readonly writes: WriteBatcher,
  ) {}

  append({ group, entries }: GroupStreamAppend): Promise<StoredOutcome[]> {
    return this.log.append(group, entries);
  }

  findSeqs(input: { group: GroupKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    return this.log.findSeqs(input.group, input.keys);
  }

  readAfter({ group, afterGseq, limit }: GroupPageAfter): Promise<Entry[]> {
    return this.log.readAfter(group, afterGseq, limit);
  }

  readBefore({ group, beforeGseq, limit }: GroupPageBefore): Promise<Entry[]> {
    return this.log.readBefore(group, beforeGseq, limit);
  }

  headSeq(group: GroupKey): Promise<number> {
    return this.log.headSeq(group);
  }

  /** Compare-and-raise as one batched write (writes run one at a time): racing acks keep the highest. */
  async setCursor({ group, inbox, gseq }: GroupCursor): Promise<number> {
    if (!Number.isSafeInteger(gseq) || gseq < 0) throw new BadRequestError(`invalid gseq ${String(gseq)}`);
    return this.writes.run(() => {
      const current = this.cursors.get([group, inbox]) ?? 0;
      if (gseq <= current) return current;
      this.cursors.put([group, inbox], gseq);
      return gseq;
    });
  }

  async getCursor({ group, inbox }: GroupCursorRef): Promise<number> {
    return this.cursors.get([group, inbox]) ?? 0;
  }

  async listCursors(group: GroupKey): Promise<Map<InboxKey, number>> {
    const range = this.cursors.getRange({ start: [group, ''], end: [group, MAX_KEY_STRING] });
    return new Map(Array.from(range, ({ key, value }) => [key[1] as InboxKey, value]));
  }
}
