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
import { runFollowUp, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type { AppendOutcome, FollowUpAppend, FollowUpResult, Logger } from '@seqline/core';
import type { Subscription } from '@nats-io/transport-node';
import { BalancingRounds } from './balancing-rounds.ts';
import { LiveOwners } from './live-owners.ts';
import { RedisOwnerRegistry, preferredOwner } from './owner-registry.ts';
import { announce, listen } from './shard-notices.ts';
import type { RemoteInboxWriter } from './remote-inbox-writer.ts';
import { RedisShardLeases, errMessage } from './shard-leases.ts';
import type { ShardLease } from './shard-leases.ts';
import { ShardSlot } from './shard-slot.ts';
import { sharedWriterMemory, shardWriters } from './shard-writers.ts';
import { OwnerTallyBook, type OwnerTallies } from './owner-tallies.ts';
import type { SharedWriterMemory } from './shard-writers.ts';
import { RedisBehindIndexes } from './behind-indexes.ts';
import type { InFlight } from './shard-slot.ts';
import { DEFAULT_SUBJECT_PREFIX, OWNER_QUEUE_GROUP, shardSubject } from './wire.ts';
import { candidateShards, takeFreeShards } from './shard-balancing.ts';
import { appendAnywhere, followUpForwarder, hostReadiness, servingShards, shardStates } from './host-slots.ts';
import type { HostReadiness, ShardOwnerHostOptions, ShardStatus } from './shard-owner-host-options.ts';

export type { HostReadiness, ShardOwnerHostOptions, ShardStatus } from './shard-owner-host-options.ts';

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
    this.candidates = candidateShards(options.desiredShards ?? 'all', this.shardCount);
    this.subjectPrefix = options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX;
    this.rounds = new BalancingRounds(() => this.tick(), this.leases.renewIntervalMs, this.logger);
    this.inFlight = { count: 0, max: options.maxInFlight ?? 10_000 };
    this.shared = sharedWriterMemory(options.ownerOptions);
    this.behindIndexes = new RedisBehindIndexes(options.redis, keyPrefix, this.logger);
    this.forward = followUpForwarder(options.nc, this.shardCount, this.subjectPrefix, options.logger);
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
    return hostReadiness(this.slots, this.wanted, this.state === 'running');
  }

  /** Shards whose requests this host answers now. */
  servingShards(): number[] {
    return servingShards(this.slots.values());
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
    return shardStates(this.slots.values());
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
    takeFreeShards(open, holders, this.freeSince, { wanted, now, ttl }, (shard) => void this.acquire(shard));
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
    return runFollowUp(outcomes, next, (input) => appendAnywhere(input, this.slots, this.shardCount, this.forward), this.logger);
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
