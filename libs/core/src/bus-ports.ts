/**
 * Ports of the work queue and the push bus (libs/bus), split from ports.ts, which re-exports
 * them: the jobs a queue persists in embedded mode, the queue itself, and pushes to inboxes.
 */
import type { Entry, Json } from './entry.ts';
import type { InboxKey } from './ids.ts';
import type { ConversationState } from './conversations/view.ts';

// ---------------------------------------------------------------- persisted jobs (local bus)

export interface StoredJob {
  /** Dedup key: putting a job whose id exists is a no-op. */
  id: string;
  queue: string;
  payload: Json;
  attempts: number;
  /** Epoch ms before which the job must not run (backoff). */
  notBefore: number;
  createdAt: number;
  /**
   * Epoch ms of the job's first failed attempt since it was accepted (or replayed): the give-up
   * window counts from here, so time a job waits for a worker is never failing time. Absent until
   * an attempt fails; rows stored before the field existed lack it too, and their next failure
   * opens the window.
   */
  firstFailedAt?: number;
  lastError?: string;
}

export interface JobStore {
  /** Durable when resolved; false when a job with this id is already pending. */
  put(job: StoredJob): Promise<boolean>;
  update(job: StoredJob): Promise<void>;
  remove(id: string): Promise<void>;
  /** Pending jobs, oldest first: those of `queue`, or of every queue when it is absent. */
  list(input: { queue?: string }): Promise<StoredJob[]>;
  /** Moves a job to the dead-letter set (atomically removing it from pending). */
  bury(job: StoredJob): Promise<void>;
  listDead(): Promise<StoredJob[]>;
  /** Moves a dead job back to pending with attempts and firstFailedAt reset (a fresh give-up window); false when absent. */
  revive(input: JobRevival): Promise<boolean>;
}

/** JobStore.revive: the dead job to move back to pending, at `now` (epoch ms). */
export interface JobRevival {
  id: string;
  now: number;
}

// ---------------------------------------------------------------- bus

export interface PushMessage {
  inbox: InboxKey;
  /** Seq that came before the first entry in this inbox (the previous gseq when `group` is set). */
  prevSeq: number;
  entries: Entry[];
  /**
   * Set for a read-fanout group push: the tenant-local group id. `entries` are then messages of
   * that group stream (their `seq` is the gseq) and `prevSeq` the gseq before the first one;
   * `inbox` is still the member the push is for. Gateways send it as a `group.push` frame.
   */
  group?: string;
  /**
   * Inbox pushes only: the states of every conversation the entries touch, each exact at
   * or past the newest pushed entry touching it. Absent when the owner could not read them all
   * so (an index lagging its entries, a slow or failed read): the client then asks sync.
   */
  convs?: ConversationState[];
}

export interface JobContext {
  id: string;
  attempt: number;
}

export interface QueueOptions {
  /** Jobs of one queue run at most this many at once (the worker pool size). */
  concurrency: number;
  /** Jobs with the same key run at most `perKeyConcurrency` at once (per-group bound). */
  keyOf?: (payload: Json) => string | undefined;
  perKeyConcurrency?: number | (() => number);
}

/** Runs one job of a queue; a throw fails the attempt. */
export type JobHandler = (payload: Json, ctx: JobContext) => Promise<void>;

/** One job for WorkQueue.enqueue. */
export interface JobEnqueue {
  queue: string;
  /** Names the job within its queue's scope: the dedup key. */
  id: string;
  payload: Json;
}

/** WorkQueue.consume: who runs the jobs of `queue`, and how many at once. */
export interface QueueConsume {
  queue: string;
  handler: JobHandler;
  options: QueueOptions;
}

/**
 * A durable work queue. A queue that passes calls on to another (a gate, a decorator) forwards
 * the input whole (`{ ...input, handler }`), so a field it does not know still reaches the queue
 * it wraps.
 */
export interface WorkQueue {
  /** Durable when resolved; dedup by id (same id enqueued twice runs once while pending). */
  enqueue(input: JobEnqueue): Promise<void>;
  /** Starts consuming. Failed handlers are retried with exponential backoff, then dead-lettered. */
  consume(input: QueueConsume): Promise<void>;
  deadLetters(): Promise<StoredJob[]>;
  replay(id: string): Promise<boolean>;
  /**
   * Stops consuming: no job starts from now on, and it resolves once the running handlers have
   * finished (their jobs done, retried or left pending for the next start). Enqueueing still
   * works: a running handler, or an owner flushing its windows, can still hand over jobs.
   */
  stopConsuming(): Promise<void>;
  /**
   * Stops consuming (as stopConsuming), then refuses new enqueues and resolves once the
   * enqueues already under way are stored: the last thing to close before the stores.
   */
  close(): Promise<void>;
}

/** PushBus.publishToEach: one push for each of `inboxes`, `msg` without its inbox. */
export interface PushToEach {
  inboxes: readonly InboxKey[];
  msg: Omit<PushMessage, 'inbox'>;
}

/** PushBus.subscribe: who hears the pushes for `inbox` in this process. */
export interface PushSubscription {
  inbox: InboxKey;
  onPush: (msg: PushMessage) => void;
}

export interface PushBus {
  publish(msg: PushMessage): void;
  /**
   * The same push to each of `inboxes` (a huge group's members), each receiving it with its own
   * `inbox`: the adapter encodes it once instead of once per member.
   */
  publishToEach(input: PushToEach): void;
  /** Delivers pushes for one inbox to this process; returns an unsubscribe. */
  subscribe(input: PushSubscription): () => void;
  /**
   * Whether the user has a live socket on some gateway: true/false, or undefined while this
   * process cannot know (a NATS bus not following presence, or its directory not trusted yet).
   */
  isOnline(inbox: InboxKey): boolean | undefined;
  close(): Promise<void>;
}
