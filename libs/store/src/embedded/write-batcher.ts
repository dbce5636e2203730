/**
 * Group commit for the embedded engine. Every write of every store is a `work` function that
 * runs inside one shared LMDB write transaction: the first write of a burst queues a
 * transaction, and when lmdb-js runs it, it drains everything queued by then. So a burst of
 * concurrent appends costs one transaction callback and one commit, not one each, and no
 * caller waits behind another caller's promise chain.
 *
 * Contract for `work`: it runs on the main thread inside the write transaction (reads see
 * earlier works of the same batch); it must do every check before its first write, because a
 * throw only fails that work — writes it already made would still commit.
 */
import type { RootDatabase } from 'lmdb';
import type { WriteJournal } from './torn-writes.ts';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface QueuedWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  outcome?: Outcome;
}

/**
 * Most works one transaction callback runs: bounds how long one drain blocks the event loop
 * (about 10 µs per append); the rest goes into the next transaction right after the commit.
 */
const MAX_WRITES_PER_TXN = 2000;

export class WriteBatcher {
  private queue: QueuedWrite[] = [];
  /** A transaction is queued in lmdb-js that will drain `queue`. */
  private scheduled = false;

  constructor(
    private readonly env: RootDatabase,
    /** Records each transaction's writes where a thread's end could tear it (torn-writes.ts). */
    private readonly journal?: WriteJournal,
  ) {}

  /** Runs `work` in the next write transaction; resolves once it is committed and flushed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) this.schedule();
    });
  }

  private schedule(): void {
    this.scheduled = true;
    let drained: QueuedWrite[] | undefined;
    /** The drain hit the cap: `scheduled` stays true and the leftovers' turn is after commit. */
    let leftovers = false;
    let committed: Promise<void>;
    try {
      const drain = (): void => {
        drained = this.queue.splice(0, MAX_WRITES_PER_TXN);
        // Writes queued from now on need a transaction of their own (leftovers get it below).
        leftovers = this.queue.length > 0;
        this.scheduled = leftovers;
        for (const write of drained) {
          try {
            write.outcome = { ok: true, value: write.work() };
          } catch (error) {
            write.outcome = { ok: false, error };
          }
        }
      };
      committed = this.env.transaction(() => (this.journal ? this.journal.run(drain) : drain()));
    } catch (error) {
      // The environment is closed: lmdb-js refuses to queue the transaction at all.
      this.scheduled = false;
      for (const write of this.queue.splice(0)) write.reject(error);
      return;
    }
    committed.then(
      () => {
        if (leftovers) this.schedule();
        const writes = drained ?? [];
        this.env.flushed.then(
          () => writes.forEach(settle),
          (error: unknown) => writes.forEach((write) => write.reject(error)),
        );
      },
      (error: unknown) => {
        if (drained === undefined) {
          // The callback never ran: its writes are still queued and nothing else drains them.
          this.scheduled = false;
          drained = this.queue.splice(0);
        } else if (leftovers) {
          this.schedule();
        }
        for (const write of drained) write.reject(error);
      },
    );
  }
}

function settle(write: QueuedWrite): void {
  const outcome = write.outcome;
  if (outcome === undefined) write.reject(new Error('write was not run by its transaction'));
  else if (outcome.ok) write.resolve(outcome.value);
  else write.reject(outcome.error);
}
