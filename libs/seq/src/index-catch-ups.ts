/**
 * The inbox owner's catch-ups of conversation indexes that trail their entries: an index write
 * that failed after the entries were stored (the store tells `indexBehind`), or one a previous
 * owner left behind (handed over at takeover). Without them such an index waits for the inbox's
 * next append, and a reader that needs it (an offline notification's badge) waits with it.
 *
 * Each catch-up runs in the inbox's queue like an append (the owner's `run`), so it is fenced as
 * the owner's writes are; a failed one is retried with core's backoff, a bounded number of times.
 * At most `maxPending` inboxes wait at once: past that an inbox is not scheduled (counted in
 * `dropped`, logged); its record (BehindIndexLog) stays for the next owner, and its next append
 * catches it up anyway.
 */
import { backoffDelay, FencedError, type BackoffSchedule, type InboxKey, type Logger } from '@seqline/core';

/**
 * Where an owner records the inboxes whose index it left behind, so that whoever owns them
 * next catches them up (distributed mode: per shard, in Redis). Told without waiting; an
 * implementation logs its own failures.
 */
export interface BehindIndexLog {
  /** The inbox's index trails its entries. */
  behind(inbox: InboxKey): void;
  /** A catch-up indexed every entry of the inbox. */
  caughtUp(inbox: InboxKey): void;
}

export interface IndexCatchUpOptions {
  /** Inboxes waiting for a catch-up at once, at most. Default 10 000. */
  maxPending?: number;
  /** Delays between the attempts of one inbox (core's backoffDelay). Default 200 ms doubling to 30 s. */
  retry?: BackoffSchedule;
  /** Attempts per inbox; then it is left to its next append or owner. Default 10. */
  maxAttempts?: number;
}

export interface IndexCatchUpStats {
  /** Inboxes waiting for a catch-up (queued, running or between attempts). */
  pending: number;
  /** Catch-ups that indexed every entry. */
  caughtUp: number;
  /** Inboxes given up after `maxAttempts` failed attempts (or fenced). */
  gaveUp: number;
  /** Inboxes not scheduled because `maxPending` were waiting. */
  dropped: number;
}

export const DEFAULT_MAX_PENDING_CATCH_UPS = 10_000;
const DEFAULT_RETRY: BackoffSchedule = { initialMs: 200, maxMs: 30_000 };
const DEFAULT_MAX_ATTEMPTS = 10;

interface PendingCatchUp {
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

export class IndexCatchUps {
  private readonly pending = new Map<InboxKey, PendingCatchUp>();
  private readonly maxPending: number;
  private readonly retry: BackoffSchedule;
  private readonly maxAttempts: number;
  private readonly counts = { caughtUp: 0, gaveUp: 0, dropped: 0 };
  private closed = false;

  constructor(
    /** Runs one catch-up of the inbox in its queue; resolves with the watermark. */
    private readonly run: (inbox: InboxKey) => Promise<number>,
    private readonly log: BehindIndexLog | undefined,
    private readonly logger: Logger,
    options: IndexCatchUpOptions = {},
  ) {
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING_CATCH_UPS;
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  /** An index write of `inbox` failed after its entries were stored: record it, then catch it up. */
  fellBehind(inbox: InboxKey): void {
    this.log?.behind(inbox);
    this.schedule(inbox);
  }

  /** Catches `inbox` up, unless one is pending already; false when it was not scheduled (closed, or the bound). */
  schedule(inbox: InboxKey): boolean {
    if (this.closed) return false;
    if (this.pending.has(inbox)) return true;
    if (this.pending.size >= this.maxPending) {
      this.counts.dropped++;
      this.logger.warn(
        { inbox, pending: this.pending.size },
        'too many index catch-ups pending; this one waits for its next append or owner',
      );
      return false;
    }
    const job: PendingCatchUp = { failures: 0, timer: undefined };
    this.pending.set(inbox, job);
    this.attempt(inbox, job);
    return true;
  }

  stats(): IndexCatchUpStats {
    return { pending: this.pending.size, ...this.counts };
  }

  /** Starts no attempt any more (one already in the inbox's queue still runs, or fails fenced). */
  close(): void {
    this.closed = true;
    for (const job of this.pending.values()) clearTimeout(job.timer);
    this.pending.clear();
  }

  private attempt(inbox: InboxKey, job: PendingCatchUp): void {
    job.timer = undefined;
    this.run(inbox).then(
      (watermark) => {
        this.pending.delete(inbox);
        this.counts.caughtUp++;
        this.log?.caughtUp(inbox);
        this.logger.info({ inbox, watermark, failures: job.failures }, 'conversation index caught up');
      },
      (err: unknown) => {
        if (this.closed) return; // the next owner's (its record stays)
        job.failures++;
        if (err instanceof FencedError || job.failures >= this.maxAttempts) {
          this.pending.delete(inbox);
          this.counts.gaveUp++;
          this.logger.warn({ inbox, err, failures: job.failures }, 'index catch-up given up; the next append or owner catches up');
          return;
        }
        job.timer = setTimeout(() => this.attempt(inbox, job), backoffDelay(job.failures, this.retry));
        job.timer.unref();
      },
    );
  }
}
