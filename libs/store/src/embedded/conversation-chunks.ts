/**
 * Index work on LMDB too big for one write transaction — a rebuild (conversation-rebuild.ts),
 * the catch-up of an index far behind its log — done a chunk at a time: a chunk's entries (at
 * most INDEX_CHUNK_ENTRIES) are read and folded with the writer's own fold (foldEntries)
 * outside any write transaction, yielding to the event loop between slices; then the chunk's
 * rows and watermark are written in one transaction of the fold's target (the whole chunk or
 * nothing): the engine's WriteBatcher, or a rebuild's scratch (rebuild-scratch.ts). Memory
 * holds one chunk whatever the inbox's size, and every other write of the server commits
 * between chunks.
 *
 * Folding outside the transaction is sound because nothing else writes the rows folded into:
 * a rebuild's scratch and staging space are its own, and a catch-up holds its inbox (below).
 * The entries a chunk reads never change; entries appended meanwhile are above them, and
 * core's rules only look at earlier entries (recallHits, editHits, a read's or delete's
 * earlier seqs).
 *
 * Per inbox, one job at a time (a turn, in the order asked). And a hold: while an inbox is
 * held, its appends wait before they are queued (the append hook's `ready`), so a job sees a
 * head that no longer moves; appends to other inboxes never wait on it.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { InternalError, KeyedQueue, OverloadedError, type Entry, type Logger } from '@seqline/core';
import { MAX_SEQ, type ConversationRows, type IndexRow, type InboxLogDbs } from './conversation-dbs.ts';
import { foldEntries, type ChunkedCatchUp } from './conversation-writer.ts';
import { fromJsonRow } from './json-rows.ts';
import { lastSeqOf } from './seq-log.ts';
import type { WriteBatcher } from './write-batcher.ts';

/**
 * Entries read, folded and written per chunk. Small enough that a chunk and its overlay die
 * young: with 1 000, a 1 000 000-entry rebuild brought GC pauses of 20–146 ms (17 over 20 ms)
 * and other users' send p99 to 69 ms (unloaded 8); with 250, none over 12 ms and p99 24 ms
 * (unloaded 25), in the same time.
 */
export const INDEX_CHUNK_ENTRIES = 250;
/** Entries folded in one slice of the event loop (about a millisecond of it). */
const FOLD_SLICE = 25;
/** Rows per page when two spaces are compared (reads only: one slice of the event loop). */
export const PAGE_ROWS = 250;
/**
 * Rows per commit when a space is copied or cleared, in key order. Every commit of the engine
 * also rewrites its share of branch and free-list pages: on a 1 000 000-entry index, 250 rows a
 * commit wrote 2.5 GB to copy it and 2.9 GB to clear it, 2 000 a commit 1.0 GB and 0.4 GB.
 */
const WRITE_PAGE_ROWS = 2000;
/**
 * After each slice of its work a job pauses this many times as long as the slice took, so it
 * takes at most about half of the event loop and of the commits, however big it is. Measured
 * on a 1 000 000-entry rebuild at load 9 on 2 cores: other users' send p50 12 ms instead of 62,
 * p99 124 ms instead of 268 (unloaded 6 and 90), the fold twice as long (docs/decisions.md,
 * "Bounded rebuild and catch-up on LMDB").
 */
const PAUSE_PER_SLICE = 1;

/** Where a fold's chunks go: the rows it reads as stored, and how one chunk is written, all of it or nothing. */
export interface FoldTarget {
  rows: ConversationRows;
  write: (work: () => void) => Promise<void>;
}

interface Hold {
  count: number;
  failure: Error | undefined;
  released: Promise<Error | undefined>;
  end: (failure: Error | undefined) => void;
}

export class IndexChunks implements ChunkedCatchUp {
  private readonly turns = new KeyedQueue<string>();
  private readonly holds = new Map<string, Hold>();
  private stopping = false;

  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
    private readonly writes: WriteBatcher,
    private readonly logger: Logger,
    readonly chunk = INDEX_CHUNK_ENTRIES,
  ) {}

  /** Runs `job` once the inbox's earlier jobs have settled. */
  inTurn<T>(inbox: string, job: () => Promise<T>): Promise<T> {
    if (this.stopping) return Promise.reject(closing());
    return this.turns.run(inbox, job);
  }

  /**
   * Holds the inbox's appends until the returned function is called. Holds nest: the last one
   * released lets the appends go, failing them with the first failure given (a catch-up's).
   */
  hold(inbox: string): (failure?: Error) => void {
    let hold = this.holds.get(inbox);
    if (hold === undefined) {
      let end: Hold['end'] = () => undefined;
      const released = new Promise<Error | undefined>((resolve) => (end = resolve));
      hold = { count: 0, failure: undefined, released, end };
      this.holds.set(inbox, hold);
    }
    const held = hold;
    held.count++;
    let done = false;
    return (failure) => {
      if (done) return;
      done = true;
      held.failure ??= failure;
      if (--held.count > 0) return;
      this.holds.delete(inbox);
      held.end(held.failure);
    };
  }

  /** While the inbox is held: resolves when the hold ends. */
  held(inbox: string): Promise<Error | undefined> | undefined {
    return this.holds.get(inbox)?.released;
  }

  /** The engine's own space `rows` as a fold's target: each chunk one work of the WriteBatcher, in a child transaction. */
  inEngine(rows: ConversationRows): FoldTarget {
    return { rows, write: (work) => this.writes.run(() => void rows.db.childTransaction(work)) };
  }

  /** Ends a slice of a job's work that began at `since` (performance.now()): pauses as long as PAUSE_PER_SLICE says. */
  async pace(since: number): Promise<void> {
    await sleep((performance.now() - since) * PAUSE_PER_SLICE);
  }

  /** Resolves once every write queued before it has committed (the appends let through before a hold). */
  settled(): Promise<void> {
    return this.writes.run(() => undefined);
  }

  /**
   * Before an append is queued: wait while the inbox is held; an inbox the writer does not
   * remember and whose live index is more than a chunk behind its log is caught up first.
   */
  ready(inbox: string, remembered: boolean): Promise<Error | undefined> | undefined {
    const held = this.held(inbox);
    if (held !== undefined || remembered) return held;
    const live = this.rows.live(inbox);
    if (lastSeqOf(this.log.entries, inbox) - live.watermark(inbox) <= this.chunk) return undefined;
    return this.catchUp(inbox);
  }

  /** Folds the live index up to the head, the inbox held: its appends, this one first, wait in order. */
  private catchUp(inbox: string): Promise<Error | undefined> {
    const release = this.hold(inbox);
    const released = this.held(inbox) as Promise<Error | undefined>;
    const job = async () => {
      await this.settled();
      const { folded, watermark } = await this.foldUpTo(this.inEngine(this.rows.live(inbox)), inbox, 0);
      this.logger.info({ inbox, folded, watermark }, 'conversation index caught up in chunks');
    };
    void this.inTurn(inbox, job).then(
      () => release(),
      (err: unknown) => {
        this.logger.warn({ inbox, err }, 'conversation index catch-up failed');
        release(err instanceof Error ? err : new InternalError(`conversation index catch-up failed: ${String(err)}`));
      },
    );
    return released;
  }

  /**
   * Folds the inbox's entries above the watermark of the target's rows into them, a chunk per
   * write, until at most `slack` entries are left above it. Returns the entries folded and the
   * watermark reached.
   */
  async foldUpTo(target: FoldTarget, inbox: string, slack: number): Promise<{ folded: number; watermark: number }> {
    const { rows } = target;
    let watermark = rows.watermark(inbox);
    let folded = 0;
    while (lastSeqOf(this.log.entries, inbox) - watermark > slack) {
      this.checkRunning();
      let since = performance.now();
      const entries = this.readChunk(inbox, watermark);
      const first = entries.slice(0, FOLD_SLICE);
      if (first.length === 0) break;
      const pending = foldEntries(rows, this.log, inbox, first);
      for (let i = FOLD_SLICE; i < entries.length; i += FOLD_SLICE) {
        await this.pace(since);
        since = performance.now();
        foldEntries(rows, this.log, inbox, entries.slice(i, i + FOLD_SLICE), pending);
      }
      await this.pace(since);
      since = performance.now();
      const from = watermark;
      await target.write(() => {
        if (rows.watermark(inbox) !== from) throw new InternalError(`conversation index of ${inbox} changed under a chunked fold`);
        pending.write();
      });
      await this.pace(since);
      watermark = pending.watermark;
      folded += entries.length;
    }
    return { folded, watermark };
  }

  /** Removes the inbox's rows from the engine's space `rows`, the watermark first, a page per write. */
  async clear(rows: ConversationRows, inbox: string): Promise<number> {
    const { write } = this.inEngine(rows);
    if (rows.watermark(inbox) !== 0) await write(() => rows.removeWatermark(inbox));
    let removed = 0;
    for (;;) {
      this.checkRunning();
      const since = performance.now();
      const page = rows.rowsAfter(inbox, undefined, WRITE_PAGE_ROWS);
      if (page.length === 0) return removed;
      await write(() => page.forEach((row) => rows.removeRow(inbox, row)));
      removed += page.length;
      await this.pace(since);
    }
  }

  /** Copies the inbox's rows, then its watermark, from `from` (a scratch) into the engine's space `to`, in key order, a page per write. */
  async copy(from: ConversationRows, to: ConversationRows, inbox: string): Promise<number> {
    const { write } = this.inEngine(to);
    let copied = 0;
    for (let after: IndexRow | undefined; ;) {
      this.checkRunning();
      const since = performance.now();
      const page = from.rowsAfter(inbox, after, WRITE_PAGE_ROWS);
      if (page.length > 0) await write(() => page.forEach((row) => to.putRow(inbox, row)));
      copied += page.length;
      if (page.length < WRITE_PAGE_ROWS) break;
      after = page[page.length - 1];
      await this.pace(since);
    }
    const watermark = from.watermark(inbox);
    await write(() => to.putWatermark(inbox, watermark));
    return copied;
  }

  /** Stops taking jobs; a running one stops at its next chunk (nothing of it live). Resolves once none runs. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.turns.idle();
  }

  private checkRunning(): void {
    if (this.stopping) throw closing();
  }

  private readChunk(inbox: string, after: number): Entry[] {
    const range = this.log.entries.getRange({
      start: [inbox, after],
      exclusiveStart: true,
      end: [inbox, MAX_SEQ],
      inclusiveEnd: true,
      limit: this.chunk,
    });
    return Array.from(range, ({ value }) => fromJsonRow(value));
  }
}

function closing(): OverloadedError {
  return new OverloadedError('embedded store closing: conversation index work stopped between chunks (nothing of it is live); retry');
}
