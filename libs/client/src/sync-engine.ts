import { SeqlineClientError } from './errors.ts';
import type { ClientLogger } from './logger.ts';
import type { MaxSeqStore } from './max-seq-store.ts';
import { isAscendingAfter, type Conversation, type Entry, type GroupNews, type SyncResult } from './wire.ts';

export interface SyncEngineOptions {
  store: MaxSeqStore;
  /** Entries per sync page (server default 200, max 1000). */
  pageLimit: number;
  fetchPage(maxSeq: number, limit: number): Promise<SyncResult>;
  /** Hands an ascending batch to the app; max seq moves (and is saved) once it resolves. */
  deliver(entries: Entry[]): Promise<void>;
  groups(groups: GroupNews[]): Promise<void>;
  /** The conversation states a sync page carried (maybe none), after its entries were delivered. */
  convs?(convs: Conversation[]): Promise<void>;
  /** A sync run ended with nothing more on the server. */
  synced?(maxSeq: number): void;
  logger: ClientLogger;
}

/**
 * - applied: the push continued (or overlapped) our max seq; its new entries were delivered.
 * - stale: everything in it was already delivered.
 * - gap: it starts past our max seq; entries are missing in between, a sync is needed.
 * - invalid: its seqs do not ascend from prevSeq; ignored, a sync is the safe answer.
 */
export type PushOutcome = 'applied' | 'stale' | 'gap' | 'invalid';

/**
 * The "no sync skip" half of the client. One number, max seq, is the boundary of what the app
 * has seen. Both paths that deliver entries (pushes and sync pages) run through one serial
 * queue and deliver only `seq > maxSeq`, so across both every inbox entry is delivered exactly
 * once, ascending. This relies on two server promises (docs/protocol.md; I2 in docs/architecture.md): a sync page
 * lists *every* entry in (maxSeq, last seq of the page], and a push lists every entry in
 * (prevSeq, its last seq]. Hence a push with prevSeq <= maxSeq can be applied from maxSeq on;
 * one with prevSeq > maxSeq leaves a hole only a sync can fill.
 */
export class SyncEngine {
  private maxSeq = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private loaded: Promise<void> | null = null;
  private running: Promise<void> | null = null;
  private wanted = false;
  /** A bootstrap in progress: sync rounds wait for it, so they start from its headSeq. */
  private gate: Promise<unknown> | null = null;

  constructor(private readonly opts: SyncEngineOptions) {}

  /** Highest seq delivered to the app (and saved, unless the store failed). */
  get currentMaxSeq(): number {
    return this.maxSeq;
  }

  /** Reads the stored max seq; everything else waits for it. Retried after a failure. */
  load(): Promise<void> {
    if (!this.loaded) {
      const loading = this.serial(async () => {
        this.maxSeq = await this.opts.store.load();
      });
      this.loaded = loading;
      loading.catch(() => {
        if (this.loaded === loading) this.loaded = null;
      });
    }
    return this.loaded;
  }

  handlePush(prevSeq: number, entries: readonly Entry[]): Promise<PushOutcome> {
    const loaded = this.load();
    return this.serial(async (): Promise<PushOutcome> => {
      await loaded;
      if (!isAscendingAfter(entries, prevSeq)) return 'invalid';
      const last = entries[entries.length - 1];
      if (!last || last.seq <= this.maxSeq) return 'stale';
      if (prevSeq > this.maxSeq) return 'gap';
      await this.apply(entries);
      return 'applied';
    });
  }

  /**
   * Pages `sync` from max seq until the server has no more. Calls while a sync runs join it,
   * and it then does one more round, so the promise always covers a sync that *started* after
   * the call (a push gap seen mid-sync is never lost).
   */
  syncNow(): Promise<void> {
    this.wanted = true;
    this.running ??= this.runRounds();
    return this.running;
  }

  /**
   * A fresh device's bootstrap: `task` fetches a summary of the inbox exact at `headSeq` (the
   * conversation list), then max seq jumps there, so sync goes on from it instead of replaying
   * the inbox from 0. Entries at or below headSeq are not delivered through `deliver` after
   * the jump: the summary stands for them. Sync rounds starting meanwhile wait; a page already
   * in flight is applied from the (possibly new) max seq on, so nothing past headSeq is lost.
   * Max seq only moves forward.
   */
  bootstrap<T extends { headSeq: number }>(task: () => Promise<T>): Promise<T> {
    const run = (async () => {
      await this.load();
      const summary = await task();
      await this.serial(() => this.advanceTo(summary.headSeq));
      return summary;
    })();
    const gate = run.catch(() => undefined);
    this.gate = gate;
    void gate.then(() => {
      if (this.gate === gate) this.gate = null;
    });
    return run;
  }

  private async advanceTo(seq: number): Promise<void> {
    if (seq <= this.maxSeq) return;
    this.maxSeq = seq;
    await this.save();
  }

  private async runRounds(): Promise<void> {
    try {
      await this.load();
      while (this.gate) await this.gate;
      while (this.wanted) {
        this.wanted = false;
        await this.syncAllPages();
      }
      this.opts.synced?.(this.maxSeq);
    } finally {
      // Same tick as the loop's last check of `wanted`: no call can slip in between.
      this.wanted = false;
      this.running = null;
    }
  }

  private async syncAllPages(): Promise<void> {
    for (;;) {
      const from = this.maxSeq;
      const page = await this.opts.fetchPage(from, this.opts.pageLimit);
      if (!isAscendingAfter(page.entries, from)) {
        throw new SeqlineClientError('PROTOCOL', `sync from ${from}: entries do not ascend past it`);
      }
      await this.serial(async () => {
        await this.apply(page.entries);
        if (page.convs !== undefined) await this.opts.convs?.(page.convs);
      });
      if (page.groups.length > 0) await this.opts.groups(page.groups);
      if (!page.hasMore) return;
      if (page.entries.length === 0) {
        throw new SeqlineClientError('PROTOCOL', `sync from ${from}: hasMore with no entries`);
      }
    }
  }

  /** Runs inside the queue. Delivers the part of an ascending, gap-free run past max seq. */
  private async apply(entries: readonly Entry[]): Promise<void> {
    const fresh = entries.filter((e) => e.seq > this.maxSeq);
    const last = fresh[fresh.length - 1];
    if (!last) return;
    await this.opts.deliver(fresh);
    this.maxSeq = last.seq;
    await this.save();
  }

  private async save(): Promise<void> {
    try {
      await this.opts.store.save(this.maxSeq);
    } catch (err) {
      // Delivered entries stay delivered; the next save catches up. A restart before that
      // re-delivers from the older stored value (at-least-once across a failed store).
      this.opts.logger.error({ err, maxSeq: this.maxSeq }, 'seqline: saving max seq failed');
    }
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
