/**
 * The OfflineNotifier's closed windows on their way into the work queue (docs/decisions.md, "An
 * offline notification outlives a queue outage"). A notification is kept until the queue has
 * stored its job: a failed enqueue — a JetStream publish while NATS is away fails only after
 * nats.js's 5 s timeout, even when the server is back sooner — is retried with backoff while
 * the notifier is open, always under the same job id, so a retry after an ambiguous failure
 * (stored, but the answer lost) is de-duplicated by the queue (JetStream's duplicate window, the
 * LMDB job store's ids). close() gives each waiting notification one last attempt; what is not
 * stored then is logged and counted. A notification waiting to retry holds its items, counted
 * in the notifier's bound; the bound can take back that room (`giveUpOldest`): lost, logged,
 * counted — never held past the bound.
 */
import { backoffDelay, type BackoffSchedule, type InboxKey, type Logger, type PushBus, type WorkQueue } from '@seqline/core';
import { OFFLINE_NOTIFY_QUEUE, toJson, type OfflineNotifyJob } from './queues.ts';

/**
 * Retries of a failed enqueue: soon after a blip, every 2.5–5 s through an outage (a publish
 * made while NATS is away takes 5 s to fail anyway).
 */
export const DEFAULT_NOTIFY_RETRY_BACKOFF: BackoffSchedule = { initialMs: 200, maxMs: 5_000 };

export interface NotificationSenderDeps {
  queue: Pick<WorkQueue, 'enqueue'>;
  presence: Pick<PushBus, 'isOnline'>;
  logger: Logger;
  retryBackoff: BackoffSchedule;
  /** Frees room for `items` more held items (the notifier's bound), maybe by `giveUpOldest`. */
  makeRoom: (items: number) => void;
}

export interface NotificationSenderStats {
  /** Items of the notifications waiting to retry. */
  heldItems: number;
  /** Notifications waiting to retry their enqueue. */
  retrying: number;
  enqueued: number;
  /** Notifications not retried because their user came online meanwhile. */
  droppedOnline: number;
  enqueueFailures: number;
  failed: number;
}

/** One notification, from its first enqueue attempt until the queue stored it (or it is lost). */
interface Outgoing {
  id: string;
  inbox: InboxKey;
  job: OfflineNotifyJob;
  failures: number;
  lastError: unknown;
  /** In `retrying`, its items counted in heldItems. */
  held: boolean;
  /** The pending retry. */
  timer: NodeJS.Timeout | undefined;
  attempting: boolean;
  /** Given up at the bound during an attempt: that attempt is its last. */
  givenUp: boolean;
}

export class NotificationSender {
  private readonly inFlight = new Set<Promise<void>>();
  /** Notifications waiting to retry; insertion order is the order they first failed (the oldest goes first at the bound). */
  private readonly retrying = new Map<string, Outgoing>();
  private held = 0;
  private readonly counters = { enqueued: 0, droppedOnline: 0, enqueueFailures: 0, failed: 0 };
  private closed = false;

  constructor(private readonly deps: NotificationSenderDeps) {}

  /** Enqueues the job `id` now, and keeps it (retrying) until the queue has stored it. */
  send(inbox: InboxKey, id: string, job: OfflineNotifyJob): void {
    this.attempt({ id, inbox, job, failures: 0, lastError: undefined, held: false, timer: undefined, attempting: false, givenUp: false });
  }

  /** Waits until no attempt is under way (a notification waiting to retry keeps its schedule). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /**
   * Gives every notification waiting to retry its last attempt now and waits for all attempts:
   * what is not stored then is logged and counted in `failed`. Bounded by attempts: nothing
   * retries once closed, and a notification sent afterwards is tried once.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const out of [...this.retrying.values()]) {
      if (out.attempting) continue; // the attempt under way is its last
      clearTimeout(out.timer);
      this.retry(out);
    }
    await this.settled();
  }

  /** Items of the notifications waiting to retry (counted in the notifier's bound). */
  get heldItems(): number {
    return this.held;
  }

  stats(): NotificationSenderStats {
    return { heldItems: this.held, retrying: this.retrying.size, ...this.counters };
  }

  /** Gives up the oldest notification waiting to retry (the bound needs its room); false when none waits. */
  giveUpOldest(): boolean {
    const oldest = this.retrying.values().next();
    if (oldest.done) return false;
    const out = oldest.value;
    this.release(out);
    // An attempt under way still decides: stored, it is not lost.
    if (out.attempting) out.givenUp = true;
    else this.lose(out, 'offline notification lost: given up at the bound');
    return true;
  }

  /** From a microtask: a queue that throws synchronously is caught like one that rejects. */
  private attempt(out: Outgoing): void {
    out.attempting = true;
    const attempt = Promise.resolve()
      .then(() => this.deps.queue.enqueue({ queue: OFFLINE_NOTIFY_QUEUE, id: out.id, payload: toJson(out.job) }))
      .then(
        () => this.stored(out),
        (err: unknown) => this.notStored(out, err),
      );
    this.inFlight.add(attempt);
    void attempt.finally(() => this.inFlight.delete(attempt));
  }

  private stored(out: Outgoing): void {
    out.attempting = false;
    this.release(out);
    this.counters.enqueued++;
    if (out.failures > 0) this.deps.logger.info({ ...whoOf(out), failures: out.failures }, 'offline notification enqueued after retries');
  }

  private notStored(out: Outgoing, err: unknown): void {
    out.attempting = false;
    out.failures++;
    out.lastError = err;
    this.counters.enqueueFailures++;
    if (this.closed) return this.lose(out, 'offline notification lost: not enqueued by close');
    if (out.givenUp) return this.lose(out, 'offline notification lost: given up at the bound');
    if (!out.held) {
      // Held from now on: its items count in the bound as a window's do.
      this.deps.makeRoom(out.job.entries.length);
      this.retrying.set(out.id, out);
      out.held = true;
      this.held += out.job.entries.length;
      this.deps.logger.warn({ err, ...whoOf(out) }, 'offline notification not enqueued: retrying');
    }
    out.timer = setTimeout(() => this.retry(out), backoffDelay(out.failures, this.deps.retryBackoff));
    out.timer.unref(); // close() makes the last attempt
  }

  private retry(out: Outgoing): void {
    out.timer = undefined;
    // As when its window closed: a user online now has the messages on a socket; nothing is sent.
    if (this.deps.presence.isOnline(out.inbox) === true) {
      this.release(out);
      this.counters.droppedOnline++;
      return;
    }
    this.attempt(out);
  }

  /** Out of `retrying`, its items out of the bound, its retry cancelled. */
  private release(out: Outgoing): void {
    if (out.held) this.held -= out.job.entries.length;
    out.held = false;
    this.retrying.delete(out.id);
    clearTimeout(out.timer);
    out.timer = undefined;
  }

  private lose(out: Outgoing, message: string): void {
    this.release(out);
    this.counters.failed++;
    this.deps.logger.error({ err: out.lastError, ...whoOf(out), failures: out.failures }, message);
  }
}

function whoOf(out: Outgoing): { tenant: string; user: string; items: number; job: string } {
  return { tenant: out.job.tenant, user: out.job.user, items: out.job.entries.length, job: out.id };
}
