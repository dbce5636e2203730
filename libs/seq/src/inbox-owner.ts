/**
 * The single writer of a set of inbox shards (docs/architecture.md, "Single-writer inboxes"). Embedded mode runs one owner for all
 * shards; distributed mode runs one per owned shard set (`ownedShards`) behind NATS.
 *
 * Memory: per-inbox state (queue + cached head) exists only while an inbox is active and is
 * swept after `idleInboxMs`; what stays per user is the allocator's current seq (one number,
 * bounded per section and per process, see KeyBudget). A swept inbox re-reads its head from the store.
 */
import { chainAppends, runFollowUp, shardOf, systemClock, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type {
  AppendOutcome,
  ChainedAppend,
  Clock,
  ConversationRebuildReport,
  DurableListener,
  InboxAppendThen,
  InboxKey,
  InboxReceipt,
  InboxWriter,
  Logger,
  NewEntry,
  OwnerAppend,
  TimelineStore,
} from '@seqline/core';
import { InboxOwnerClosedError, ShardNotOwnedError } from './errors.ts';
import { InboxStates } from './inbox-states.ts';
import type { InboxOp, InboxState } from './inbox-queue.ts';
import { drain, type InboxTurns } from './inbox-drain.ts';
import { RecentAppinfos } from './recent-appinfos.ts';
import { SectionAllocator, type SectionAllocatorOptions } from './section-allocator.ts';
import { KeyBudget } from './key-budget.ts';
import { neverThrowing, writeMany, writeOne, type AppendContext } from './inbox-append.ts';
import { DEFAULT_PUSH_CONVS_WAIT_MS, PushConversations } from './push-conversations.ts';
import { PushPublisher } from './push-publisher.ts';
import { IndexCatchUps, type IndexCatchUpStats } from './index-catch-ups.ts';
import type { InboxOwnerOptions } from './inbox-owner-options.ts';
import { UnsettledAppends, type UnsettledStats } from './unsettled-appends.ts';

export type { InboxOwnerOptions } from './inbox-owner-options.ts';

export const DEFAULT_MAX_SEQ_KEYS = 4_000_000;

/** Section name of a shard in the ceiling store. */
export function sectionOfShard(shard: number): string {
  return `inbox-shard-${shard}`;
}

export class InboxOwner implements InboxWriter {
  readonly shardCount: number;
  readonly epoch: number;
  private readonly timeline: TimelineStore;
  private readonly pushes: PushPublisher;
  private readonly appendContext: AppendContext;
  private readonly unsettled: UnsettledAppends;
  private readonly catchUps: IndexCatchUps | undefined;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly owned: ReadonlySet<number>;
  /** What the drains of its inboxes run their ops with. */
  private readonly turns: InboxTurns;
  private readonly allocators = new Map<number, SectionAllocator>();
  private readonly recent: RecentAppinfos;
  /** What every section allocator of this owner is made with, but its section. */
  private readonly sectionOptions: Omit<SectionAllocatorOptions, 'section'>;
  private readonly states: InboxStates;
  private readonly sweepTimer: NodeJS.Timeout;
  private closed = false;

  constructor(options: InboxOwnerOptions) {
    this.timeline = options.timeline;
    this.logger = options.logger.child({ component: 'inbox-owner', epoch: options.epoch });
    const index = options.conversations;
    const waitMs = options.pushConvsWaitMs ?? DEFAULT_PUSH_CONVS_WAIT_MS;
    const convs = index && new PushConversations(index, this.timeline, options.streamSides, waitMs, this.logger);
    this.pushes = new PushPublisher(options.push, convs, this.logger);
    this.clock = options.clock ?? systemClock;
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    this.epoch = options.epoch;
    this.owned = new Set(options.ownedShards ?? Array.from({ length: this.shardCount }, (_, i) => i));
    for (const s of this.owned) {
      if (!Number.isInteger(s) || s < 0 || s >= this.shardCount) throw new RangeError(`bad shard ${s}`);
    }
    const maxEntries = options.maxBatchEntries ?? 512;
    this.turns = {
      timeline: this.timeline,
      rebuilder: options.conversationRebuilder,
      catchUp: options.conversationCatchUp,
      limits: { maxEntries, maxOps: maxEntries },
      clock: this.clock,
      logger: this.logger,
      write: (state, entries, durable) => this.write(state, entries, durable),
    };
    const idleInboxMs = options.idleInboxMs ?? 5 * 60_000;
    this.states = new InboxStates(this.shardCount, options.maxCachedInboxes ?? 100_000, idleInboxMs, options.inboxStateBudget);
    this.recent = options.recentAppinfos ?? new RecentAppinfos(options.maxRecentAppinfos ?? 100_000);
    const appended = options.onAppended && neverThrowing(options.onAppended, this.logger);
    this.catchUps =
      options.conversationCatchUp &&
      new IndexCatchUps((inbox) => this.catchUpInQueue(inbox), options.behindIndexes, this.logger, options.indexCatchUps);
    const catchUps = this.catchUps;
    this.unsettled = new UnsettledAppends(this.logger, options.maxUnsettledEntries);
    this.appendContext = {
      timeline: this.timeline,
      recent: this.recent,
      pushes: this.pushes,
      unsettled: this.unsettled,
      logger: this.logger,
      ...(appended && { appended }),
      ...(catchUps && { indexBehind: (inbox: InboxKey) => catchUps.fellBehind(inbox) }),
    };
    this.sectionOptions = {
      ceilings: options.ceilings,
      epoch: this.epoch,
      step: options.step,
      maxKeys: options.maxKeysPerSection,
      logger: this.logger,
      budget: options.seqKeyBudget ?? new KeyBudget(options.maxSeqKeys ?? DEFAULT_MAX_SEQ_KEYS),
    };
    this.sweepTimer = setInterval(() => this.sweepIdle(), Math.max(1000, idleInboxMs / 2));
    this.sweepTimer.unref();
  }

  /** Claims every owned section up front (otherwise each is claimed on first use). */
  async start(): Promise<void> {
    await Promise.all([...this.owned].map((s) => this.allocatorFor(s)));
  }

  owns(inbox: InboxKey): boolean {
    return this.owned.has(shardOf(inbox, this.shardCount));
  }

  get cachedInboxes(): number {
    return this.states.size;
  }

  /** `durable` (see TimelineStore.append) is told only for an append that runs alone. */
  append({ inbox, entries, durable }: OwnerAppend): Promise<AppendOutcome[]> {
    return new Promise((resolve, reject) => {
      if (!this.checkAccepting(inbox, reject)) return;
      if (entries.length === 0) return resolve([]);
      this.schedule(inbox, { kind: 'append', entries, durable, resolve, reject });
    });
  }

  /** Both inboxes must be owned here (embedded mode owns all); a follow-up that is not fails. */
  appendThen({ inbox, entries, next }: InboxAppendThen): Promise<ChainedAppend> {
    return chainAppends(
      (durable) => this.append({ inbox, entries, durable }),
      (outcomes) => runFollowUp(outcomes, next, (input) => this.append(input), this.logger),
    );
  }

  addReceipt({ inbox, appinfo, readers }: InboxReceipt): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.checkAccepting(inbox, reject)) return;
      if (readers.length === 0) return resolve();
      this.schedule(inbox, { kind: 'receipt', appinfo, readers: [...readers], resolve, reject });
    });
  }

  /** Runs in the inbox's queue: after the appends queued before it, before those queued after. */
  rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport> {
    return new Promise((resolve, reject) => {
      if (!this.checkAccepting(inbox, reject)) return;
      this.schedule(inbox, { kind: 'rebuild', resolve, reject });
    });
  }

  /**
   * Catches up the indexes of these inboxes (those a previous owner recorded as left behind),
   * each in its queue, retried as after a failed index write; returns how many were scheduled.
   */
  catchUpConversations(inboxes: Iterable<InboxKey>): number {
    let scheduled = 0;
    for (const inbox of inboxes) if (this.owns(inbox) && this.catchUps?.schedule(inbox) === true) scheduled++;
    return scheduled;
  }

  /** Failed appends kept until their inbox's head is read again, and what was found landed. */
  get unsettledAppends(): UnsettledStats {
    return this.unsettled.stats();
  }

  /** The catch-ups of indexes left behind: pending now, and what became of the others (a metric). */
  get indexCatchUps(): IndexCatchUpStats {
    return this.catchUps?.stats() ?? { pending: 0, caughtUp: 0, gaveUp: 0, dropped: 0 };
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    const shard = shardOf(inbox, this.shardCount);
    if (!this.owned.has(shard)) throw new ShardNotOwnedError(shard, inbox);
    return this.states.get(inbox)?.head ?? this.timeline.headSeq(inbox);
  }

  /** Stops taking work and waits for everything queued to finish. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.catchUps?.close();
    for (;;) {
      const running = this.states.running();
      if (running.length === 0) break;
      await Promise.all(running);
    }
    await this.pushes.idle();
    for (const alloc of this.allocators.values()) alloc.release();
    this.states.release();
  }

  /** Drops inbox state that has been idle for `idleInboxMs`; returns how many were dropped. */
  sweepIdle(): number {
    return this.states.sweep(this.clock.now());
  }

  // ------------------------------------------------------------------ queue

  private checkAccepting(inbox: InboxKey, reject: (err: unknown) => void): boolean {
    if (this.closed) return (reject(new InboxOwnerClosedError()), false);
    const shard = shardOf(inbox, this.shardCount);
    if (!this.owned.has(shard)) return (reject(new ShardNotOwnedError(shard, inbox)), false);
    return true;
  }

  /** Puts `op` behind the inbox's pending ops, in memory (unlike a WorkQueue job, lost with the process), and starts their drain. */
  private schedule(inbox: InboxKey, op: InboxOp): void {
    const state = this.states.use(inbox);
    state.pending.push(op);
    state.draining ??= drain(state, this.turns);
  }

  // ------------------------------------------------------------------ writing

  private async allocatorFor(shard: number): Promise<SectionAllocator> {
    let alloc = this.allocators.get(shard);
    if (!alloc) {
      alloc = new SectionAllocator({ ...this.sectionOptions, section: sectionOfShard(shard) });
      this.allocators.set(shard, alloc);
    }
    if (!alloc.isStarted) await alloc.start();
    return alloc;
  }

  /**
   * Allocates, appends durably (the store dedups), then pushes. Outcomes align with `entries`. On a failed
   * append the allocated seqs are burnt and the head is re-read from the store next time (the
   * append may have landed after all, e.g. a timeout).
   */
  private write(state: InboxState, entries: NewEntry[], durable?: DurableListener): Promise<AppendOutcome[]> {
    // Every append passes here: no await (a microtask hop) when the allocator and head are ready.
    const alloc = this.allocators.get(state.shard);
    if (alloc?.isStarted !== true || state.head === undefined) return this.loadThenWrite(state, entries, durable);
    const [only] = entries;
    return entries.length === 1 && only !== undefined
      ? writeOne(this.appendContext, state, alloc, only, durable)
      : writeMany(this.appendContext, state, alloc, entries);
  }

  private async loadThenWrite(state: InboxState, entries: NewEntry[], durable?: DurableListener): Promise<AppendOutcome[]> {
    const alloc = await this.allocatorFor(state.shard);
    if (state.head === undefined) {
      const storeHead = await this.timeline.headSeq(state.inbox);
      alloc.observe(state.inbox, storeHead);
      await this.unsettled.settle(this.appendContext, state, storeHead);
      state.head = storeHead;
    }
    return this.write(state, entries, durable); // both ready now: straight to the writing
  }

  /** One catch-up of the inbox's index, queued behind its pending ops (IndexCatchUps' `run`). */
  private catchUpInQueue(inbox: InboxKey): Promise<number> {
    return new Promise((resolve, reject) => {
      if (!this.checkAccepting(inbox, reject)) return;
      this.schedule(inbox, { kind: 'catch-up', resolve, reject });
    });
  }
}
