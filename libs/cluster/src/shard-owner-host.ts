/**
 * Runs in a worker process: holds shard leases, runs one InboxOwner (and, given a group stream
 * store, one GroupStreamWriter) per owned shard and serves `inbox.append.<shard>` requests for
 * it (docs/architecture.md, "Single-writer inboxes").
 *
 * Balancing (best effort; safety comes from the leases alone): hosts heartbeat into a registry
 * of live owners; each shard is *wanted* by its rendezvous-hash owner among the live ones. A
 * host takes a wanted shard as soon as its lease is free, takes any other candidate shard
 * whose lease has been free for a full ttl (its preferred owner is not taking it), and gives
 * back shards it is not the preferred owner of once the membership has been stable for a ttl.
 *
 * A host announces the shards it gives back and the ones it starts serving (shard-notices.ts):
 * the other hosts balance at once, callers retry at once, so a clean handover (which skips the
 * wait-out) takes milliseconds, not up to ttl/3 of noticing plus a backoff.
 */
import { performance } from 'node:perf_hooks';
import { runFollowUp, shardOf, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type {
  AppendOutcome,
  ConversationIndex,
  FollowUpAppend,
  FollowUpResult,
  GroupStreamStore,
  InboxAppend,
  Logger,
  PushBus,
  SeqCeilingStore,
  TimelineStore,
} from '@seqline/core';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import { BalancingRounds } from './balancing-rounds.ts';
import { LiveOwners } from './live-owners.ts';
import { RedisOwnerRegistry, preferredOwner } from './owner-registry.ts';
import { announce, listen } from './shard-notices.ts';
import { RemoteInboxWriter } from './remote-inbox-writer.ts';
import { RedisShardLeases, errMessage } from './shard-leases.ts';
import type { ShardLease } from './shard-leases.ts';
import { ShardLeaseLostError } from './errors.ts';
import { ShardSlot } from './shard-slot.ts';
import { sharedWriterMemory, shardWriters } from './shard-writers.ts';
import { OwnerTallyBook, type OwnerTallies } from './owner-tallies.ts';
import type { GuardedCatchUp, GuardedRebuilder, OwnerTuning, SharedWriterMemory } from './shard-writers.ts';
import { RedisBehindIndexes } from './behind-indexes.ts';
import type { InFlight, SlotState } from './shard-slot.ts';
import { DEFAULT_SUBJECT_PREFIX, OWNER_QUEUE_GROUP, shardSubject } from './wire.ts';

export interface ShardOwnerHostOptions {
  nc: NatsConnection;
  redis: Redis;
  ceilings: SeqCeilingStore;
  timeline: TimelineStore;
  /**
   * Read-fanout group streams (the CQL GroupStreamStore in distributed mode): the owner of a
   * shard also writes the group streams of that shard. Without it `gappend`/`ghead` requests
   * fail with a final (not retried) INTERNAL error.
   */
  groupStreams?: GroupStreamStore;
  /** The conversation index its owners read once per append for push `convs` (the CQL index). */
  conversations?: ConversationIndex;
  /** Rebuilds an inbox's conversation index (the CQL timeline); without it `rebuild` requests fail. */
  conversationRebuilder?: GuardedRebuilder;
  /**
   * Catches up an inbox's index left behind its entries (the CQL timeline). With it an owner
   * catches up after its own failed index writes, records those inboxes per shard in Redis
   * (behind-indexes.ts), and a new owner catches up the recorded ones when it starts serving.
   */
  conversationCatchUp?: GuardedCatchUp;
  push: PushBus;
  logger: Logger;
  /** Unique per process (e.g. `worker-<host>-<pid>`); no '|'. */
  ownerId: string;
  /** Fixed for a deployment. Default 64. */
  shardCount?: number;
  /** Shards this host may own. Default 'all'. */
  desiredShards?: 'all' | number[];
  /** Default 10 s. */
  leaseTtlMs?: number;
  leaseMarginMs?: number;
  /** Redis key prefix for leases and the owner registry. Default `seqline:`. */
  keyPrefix?: string;
  /** Default `inbox.append`. */
  subjectPrefix?: string;
  queueGroup?: string;
  /** Requests handled at once by this host before replying OVERLOADED. Default 10 000. */
  maxInFlight?: number;
  /** Monotonic clock in ms for leases and wait-outs. Default `performance.now` (tests inject pauses). */
  now?: () => number;
  /** Passed to every InboxOwner (`step` and `maxBatchEntries` to every GroupStreamWriter too). */
  ownerOptions?: OwnerTuning;
}

export interface ShardStatus {
  shard: number;
  state: SlotState;
  epoch: number;
}

/** A host's `/readyz` (ShardOwnerHost.readiness). */
export interface HostReadiness {
  /** It serves every shard it should (see ShardOwnerHost.readiness). */
  ready: boolean;
  /** Shards it serves now, ascending. */
  serving: number[];
  /** Shards it should serve and does not yet (acquiring, waiting out, held by another), ascending. */
  pending: number[];
}

export class ShardOwnerHost {
  readonly ownerId: string;
  readonly shardCount: number;
  readonly leases: RedisShardLeases;
  private readonly options: ShardOwnerHostOptions;
  private readonly logger: Logger;
  private readonly registry: RedisOwnerRegistry;
  private readonly owners: LiveOwners;
  private readonly candidates: number[];
  private readonly subjectPrefix: string;
  private readonly inFlight: InFlight;
  private readonly now: () => number;
  private readonly slots = new Map<number, ShardSlot>();
  private readonly tallies = new OwnerTallyBook();
  /** Follow-ups for inboxes of shards served elsewhere. */
  private readonly forward: RemoteInboxWriter;
  /** One for all the shard owners: the memory bound is the process's, however many shards it holds. */
  private readonly shared: SharedWriterMemory;
  private readonly behindIndexes: RedisBehindIndexes;
  private readonly acquiring = new Set<number>();
  private readonly freeSince = new Map<number, number>();
  private readonly rounds: BalancingRounds;
  /** The shards this host was the preferred owner of in its last round; undefined before the first. */
  private wanted: ReadonlySet<number> | undefined;
  private releases: Subscription | undefined;
  private state: 'new' | 'running' | 'closing' | 'closed' = 'new';

  constructor(options: ShardOwnerHostOptions) {
    this.options = options;
    this.ownerId = options.ownerId;
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    this.logger = options.logger.child({ component: 'shard-owner-host', ownerId: this.ownerId });
    const keyPrefix = options.keyPrefix ?? 'seqline:';
    this.now = options.now ?? (() => performance.now());
    this.leases = new RedisShardLeases({
      redis: options.redis,
      ceilings: options.ceilings,
      ownerId: this.ownerId,
      ttlMs: options.leaseTtlMs,
      marginMs: options.leaseMarginMs,
      keyPrefix,
      logger: options.logger,
      now: this.now,
    });
    this.registry = new RedisOwnerRegistry(options.redis, keyPrefix, this.leases.ttlMs);
    this.owners = new LiveOwners(this.registry, this.ownerId, this.logger, this.now);
    const desired = options.desiredShards ?? 'all';
    this.candidates =
      desired === 'all' ? Array.from({ length: this.shardCount }, (_, i) => i) : [...new Set(desired)].sort((a, b) => a - b);
    for (const s of this.candidates) {
      if (!Number.isInteger(s) || s < 0 || s >= this.shardCount) throw new RangeError(`bad shard ${s}`);
    }
    this.subjectPrefix = options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX;
    this.rounds = new BalancingRounds(() => this.tick(), this.leases.renewIntervalMs, this.logger);
    this.inFlight = { count: 0, max: options.maxInFlight ?? 10_000 };
    this.shared = sharedWriterMemory(options.ownerOptions);
    this.behindIndexes = new RedisBehindIndexes(options.redis, keyPrefix, this.logger);
    // Short deadline: a follow-up is raced against its own timeout, and its fallback is a job.
    this.forward = new RemoteInboxWriter({
      nc: options.nc,
      shardCount: this.shardCount,
      subjectPrefix: this.subjectPrefix,
      logger: options.logger,
      requestTimeoutMs: 1000,
      deadlineMs: 2000,
    });
  }

  /** Registers, starts renewing and balancing; the first round runs before this resolves. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('ShardOwnerHost.start called twice');
    this.state = 'running';
    this.leases.onLost((lease, reason) => this.onLeaseLost(lease, reason));
    this.leases.start();
    this.releases = listen(this.options.nc, this.subjectPrefix, 'released', ({ owner }) => {
      if (owner !== this.ownerId && this.state === 'running') this.rounds.kick();
    });
    await this.rounds.start();
  }

  /**
   * Ready when this host serves every shard it should: those it is the preferred owner of among
   * the live hosts (within `desiredShards`) and those it holds and is not giving back. Never
   * before the first balancing round, nor once closing.
   */
  readiness(): HostReadiness {
    const serving = this.servingShards();
    const mine = new Set(this.wanted ?? []);
    for (const slot of this.slots.values()) if (slot.state !== 'stopping' && slot.state !== 'stopped') mine.add(slot.shard);
    const pending = [...mine].filter((s) => !serving.includes(s)).sort((a, b) => a - b);
    const ready = this.state === 'running' && this.wanted !== undefined && pending.length === 0;
    return { ready, serving, pending };
  }

  /** Shards whose requests this host answers now. */
  servingShards(): number[] {
    return [...this.slots.values()]
      .filter((s) => s.state === 'serving')
      .map((s) => s.shard)
      .sort((a, b) => a - b);
  }

  /** appinfos its owners remember to answer resends (at most `ownerOptions.maxRecentAppinfos`). */
  get rememberedAppinfos(): number {
    return this.shared.recentAppinfos.size;
  }
  /** Keys (inboxes, groups) whose current seq its allocators remember (at most `ownerOptions.maxSeqKeys`). */
  get rememberedSeqKeys(): number {
    return this.shared.seqKeyBudget.size;
  }
  /** Inboxes whose head and queue its owners hold (at most `ownerOptions.maxCachedInboxes`, busy ones aside). */
  get cachedInboxes(): number {
    return this.shared.inboxStateBudget.size;
  }
  /** Its owners' index catch-ups and unsettled appends: levels now, totals since the process started. */
  get ownerTallies(): OwnerTallies {
    return this.tallies.sum([...this.slots.values()].map((slot) => slot.ownerCounts));
  }

  shardStates(): ShardStatus[] {
    return [...this.slots.values()].map((s) => ({ shard: s.shard, state: s.state, epoch: s.epoch })).sort((a, b) => a.shard - b.shard);
  }

  /**
   * Leaves the registry first (so the other hosts prefer themselves for its shards), then hands
   * every shard back — finishing queued work, recording the clean release, announcing it — so
   * a successor serves each shard as soon as it is released.
   */
  async close(): Promise<void> {
    if (this.state === 'closed' || this.state === 'closing') return;
    this.state = 'closing';
    await this.rounds.stop();
    await this.registry.leave(this.ownerId).catch((err: unknown) => this.logger.warn({ err: errMessage(err) }, 'registry leave failed'));
    await Promise.all([...this.slots.values()].map((slot) => this.drop(slot, 'host closing')));
    this.leases.stop();
    this.releases?.unsubscribe();
    await this.forward.close();
    this.state = 'closed';
  }

  // ------------------------------------------------------------------ balancing

  private async tick(): Promise<void> {
    for (const slot of this.slots.values()) {
      const blocker = slot.state === 'serving' ? this.leases.writeBlocker(slot.lease) : undefined;
      if (blocker !== undefined) void this.drop(slot, blocker);
    }
    const live = await this.owners.refresh();
    const now = this.now();
    const ttl = this.leases.ttlMs;
    const wanted = new Set(this.candidates.filter((s) => preferredOwner(s, live) === this.ownerId));
    this.wanted = wanted;

    if (now - this.owners.stableSince >= ttl) {
      for (const slot of this.slots.values()) {
        if (!wanted.has(slot.shard) && slot.state === 'serving') void this.drop(slot, 'rebalanced to its preferred owner');
      }
    }

    const open = this.candidates.filter((s) => !this.slots.has(s) && !this.acquiring.has(s));
    const holders = await this.leases.holders(open);
    for (const shard of open) {
      if (holders.get(shard) != null) {
        this.freeSince.delete(shard);
        continue;
      }
      const since = this.freeSince.get(shard) ?? now;
      this.freeSince.set(shard, since);
      if (wanted.has(shard) || now - since >= ttl) void this.acquire(shard);
    }
  }

  // ------------------------------------------------------------------ shard lifecycle

  private async acquire(shard: number): Promise<void> {
    if (this.state !== 'running' || this.slots.has(shard) || this.acquiring.has(shard)) return;
    this.acquiring.add(shard);
    let slot: ShardSlot | undefined;
    try {
      const lease = await this.leases.acquire(shard);
      if (!lease) return;
      if (this.state !== 'running') {
        await this.leases.release(lease);
        return;
      }
      slot = this.newSlot(lease);
      this.slots.set(shard, slot);
      this.freeSince.delete(shard);
    } catch (err) {
      this.logger.warn({ shard, err: errMessage(err) }, 'shard acquisition failed');
      return;
    } finally {
      this.acquiring.delete(shard);
    }
    try {
      if (!(await slot.activate())) await this.drop(slot, 'stopped while activating');
    } catch (err) {
      this.logger.warn({ shard, err: errMessage(err) }, 'shard activation failed');
      await this.drop(slot, 'activation failed');
    }
  }

  private newSlot(lease: ShardLease): ShardSlot {
    const o = this.options;
    const { owner, groupWriter, behind } = shardWriters(lease, {
      ...o,
      behindIndexes: this.behindIndexes,
      logger: this.logger,
      shardCount: this.shardCount,
      ...this.shared,
      writeBlocker: (l) => this.leases.writeBlocker(l),
    });
    return new ShardSlot({
      nc: o.nc,
      subject: shardSubject(this.subjectPrefix, lease.shard),
      queueGroup: o.queueGroup ?? OWNER_QUEUE_GROUP,
      shardCount: this.shardCount,
      leases: this.leases,
      lease,
      owner,
      groupWriter,
      ...(behind && { behind }),
      inFlight: this.inFlight,
      logger: this.logger,
      now: this.now,
      onUnwritable: (slot, reason) => void this.drop(slot, reason),
      onServing: (slot) => announce(o.nc, this.subjectPrefix, 'serving', { owner: this.ownerId, shard: slot.shard }, this.logger),
      followUp: (outcomes, next) => this.followUp(outcomes, next),
    });
  }

  /** A follow-up append: in place when this host serves its shard, else over NATS. */
  private followUp(outcomes: readonly AppendOutcome[], next: FollowUpAppend): Promise<FollowUpResult> {
    return runFollowUp(outcomes, next, (input) => this.appendAnywhere(input), this.logger);
  }

  /**
   * A shard this host holds but cannot write now (waiting out, handing over) has no other owner
   * to forward to: the follow-up fails at once and the caller falls back to its durable path
   * instead of waiting for its timeout.
   */
  private appendAnywhere(input: InboxAppend): Promise<AppendOutcome[]> {
    const { inbox, entries } = input;
    const shard = shardOf(inbox, this.shardCount);
    const slot = this.slots.get(shard);
    if (!slot) return this.forward.append(input);
    return slot.appendHere(inbox, entries) ?? Promise.reject(new ShardLeaseLostError(shard, `shard is ${slot.state} here`));
  }

  private onLeaseLost(lease: ShardLease, reason: string): void {
    const slot = this.slots.get(lease.shard);
    if (slot && slot.lease === lease) void this.drop(slot, reason);
  }

  /**
   * Stops serving the shard, lets its owner finish (queued writes of a lost lease fail at the
   * fence), then releases the lease — recorded as clean only when the owner closed cleanly and
   * the lease was still writable (RedisShardLeases.release) — and announces it. The next round
   * may take it again with a new epoch: at once after a clean release, else after a wait-out.
   */
  private async drop(slot: ShardSlot, reason: string): Promise<void> {
    if (slot.state === 'stopping' || slot.state === 'stopped') return slot.stop();
    this.logger.info({ shard: slot.shard, epoch: slot.epoch, reason }, 'dropping shard');
    let stopped = true;
    try {
      await slot.stop();
    } catch (err) {
      stopped = false;
      this.logger.warn({ shard: slot.shard, err: errMessage(err) }, 'shard owner did not close cleanly');
    }
    if (this.slots.get(slot.shard) === slot) this.slots.delete(slot.shard);
    this.tallies.retire(slot.ownerCounts);
    try {
      await this.leases.release(slot.lease, { stopped });
    } catch (err) {
      this.logger.warn({ shard: slot.shard, err: errMessage(err) }, 'lease release failed (it expires by itself)');
    }
    announce(this.options.nc, this.subjectPrefix, 'released', { owner: this.ownerId, shard: slot.shard }, this.logger);
    // Replies still owed (a request waiting for its 1:1 follow-up) go out before close() returns.
    await slot.settled();
  }
}
