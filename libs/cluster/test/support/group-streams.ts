/** A GroupStreamStore decorator for the cluster tests: records who appended, can stall an append. */
import type {
  DedupKey,
  Entry,
  GroupKey,
  GroupPageAfter,
  GroupPageBefore,
  GroupStreamAppend,
  GroupStreamStore,
  InboxKey,
  StoredOutcome,
  GroupCursor,
  GroupCursorRef,
} from '@seqline/core';
import { sleep } from './doubles.ts';

/** Wraps the real store (never replaces it): every call reaches it, appends are recorded. */
export class RecordingGroupStreams implements GroupStreamStore {
  readonly appended: Array<{ group: GroupKey; gseqs: number[] }> = [];
  /** The next append waits this long before reaching the store (a slow database). */
  stallNextAppendMs = 0;

  constructor(private readonly inner: GroupStreamStore) {}

  async append(input: GroupStreamAppend): Promise<StoredOutcome[]> {
    const stall = this.stallNextAppendMs;
    this.stallNextAppendMs = 0;
    if (stall > 0) await sleep(stall);
    const outcomes = await this.inner.append(input);
    this.appended.push({ group: input.group, gseqs: input.entries.map((e) => e.seq) });
    return outcomes;
  }

  wroteTo(group: GroupKey): boolean {
    return this.appended.some((a) => a.group === group);
  }

  findSeqs(input: { group: GroupKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    return this.inner.findSeqs(input);
  }
  readAfter(input: GroupPageAfter): Promise<Entry[]> {
    return this.inner.readAfter(input);
  }
  readBefore(input: GroupPageBefore): Promise<Entry[]> {
    return this.inner.readBefore(input);
  }
  headSeq(group: GroupKey): Promise<number> {
    return this.inner.headSeq(group);
  }
  setCursor(input: GroupCursor): Promise<number> {
    return this.inner.setCursor(input);
  }
  getCursor(input: GroupCursorRef): Promise<number> {
    return this.inner.getCursor(input);
  }
  listCursors(group: GroupKey): Promise<Map<InboxKey, number>> {
    return this.inner.listCursors(group);
  }
}
