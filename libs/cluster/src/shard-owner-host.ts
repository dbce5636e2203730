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
 */
import { performance } from 'node:perf_hooks';
import { runFollowUp, shardOf, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type { AppendOutcome, FollowUpAppend, FollowUpResult, InboxKey, Logger, NewEntry } from '@seqline/core';
import { LiveOwners } from './live-owners.ts';
import { RedisOwnerRegistry, preferredOwner } from './owner-registry.ts';
import { RemoteInboxWriter } from './remote-inbox-writer.ts';
import { RedisShardLeases, errMessage } from './shard-leases.ts';
import type { ShardLease } from './shard-leases.ts';
import { ShardSlot } from './shard-slot.ts';
import { sharedWriterMemory, shardWriters } from './shard-writers.ts';
import type { SharedWriterMemory } from './shard-writers.ts';
import type { InFlight } from './shard-slot.ts';
import type { ShardOwnerHostOptions, ShardStatus } from './shard-owner-host-options.ts';
import { DEFAULT_SUBJECT_PREFIX, OWNER_QUEUE_GROUP, shardSubject } from './wire.ts';

export type { ShardOwnerHostOptions, ShardStatus } from './shard-owner-host-options.ts';

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
  /** Follow-ups for inboxes of shards served elsewhere. */
  private readonly forward: RemoteInboxWriter;
  /** One for all the shard owners: the memory bound is the process's, however many shards it holds. */
  private readonly shared: SharedWriterMemory;
  private readonly acquiring = new Set<number>();
  private readonly freeSince = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
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
    this.inFlight = { count: 0, max: options.maxInFlight ?? 10_000 };
    this.shared = sharedWriterMemory(options.ownerOptions);
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
    await this.runTick();
    this.schedule();
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

  shardStates(): ShardStatus[] {
    return [...this.slots.values()].map((s) => ({ shard: s.shard, state: s.state, epoch: s.epoch })).sort((a, b) => a.shard - b.shard);
  }

  /** Hands every shard back (finishing queued work first) and leaves the registry. */
  async close(): Promise<void> {
    if (this.state === 'closed' || this.state === 'closing') return;
    this.state = 'closing';
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.all([...this.slots.values()].map((slot) => this.drop(slot, 'host closing')));
    this.leases.stop();
    await this.forward.close();
    await this.registry.leave(this.ownerId).catch((err: unknown) => this.logger.warn({ err: errMessage(err) }, 'registry leave failed'));
    this.state = 'closed';
  }

  // ------------------------------------------------------------------ balancing

  private schedule(): void {
    if (this.state !== 'running') return;
    this.timer = setTimeout(() => {
      void this.runTick().finally(() => this.schedule());
    }, this.leases.renewIntervalMs);
    this.timer.unref();
  }

  private runTick(): Promise<void> {
    this.ticking = this.tick().catch((err: unknown) => {
      this.logger.warn({ err: errMessage(err) }, 'shard balancing round failed');
    });
    return this.ticking;
  }

  private async tick(): Promise<void> {
    for (const slot of this.slots.values()) {
      const blocker = slot.state === 'serving' ? this.leases.writeBlocker(slot.lease) : undefined;
      if (blocker !== undefined) void this.drop(slot, blocker);
    }
    const live = await this.owners.refresh();
    const now = this.now();
    const ttl = this.leases.ttlMs;
    const wanted = new Set(this.candidates.filter((s) => preferredOwner(s, live) === this.ownerId));

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
    const { owner, groupWriter } = shardWriters(lease, {
      ...o,
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
      inFlight: this.inFlight,
      logger: this.logger,
      now: this.now,
      onUnwritable: (slot, reason) => void this.drop(slot, reason),
      followUp: (outcomes, next) => this.followUp(outcomes, next),
    });
  }

  /** A follow-up append: in place when this host serves its shard, else over NATS. */
  private followUp(outcomes: readonly AppendOutcome[], next: FollowUpAppend): Promise<FollowUpResult> {
    return runFollowUp(outcomes, next, (inbox, entries) => this.appendAnywhere(inbox, entries), this.logger);
  }

  private appendAnywhere(inbox: InboxKey, entries: NewEntry[]): Promise<AppendOutcome[]> {
    return this.slots.get(shardOf(inbox, this.shardCount))?.appendHere(inbox, entries) ?? this.forward.append(inbox, entries);
  }

  private onLeaseLost(lease: ShardLease, reason: string): void {
    const slot = this.slots.get(lease.shard);
    if (slot && slot.lease === lease) void this.drop(slot, reason);
  }

  /**
   * Stops serving the shard, lets its owner finish (queued writes of a lost lease fail at the
   * fence), then deletes the lease key if it is still ours. The next round may take it again,
   * with a new epoch and a new wait-out.
   */
  private async drop(slot: ShardSlot, reason: string): Promise<void> {
    if (slot.state === 'stopping' || slot.state === 'stopped') return slot.stop();
    this.logger.info({ shard: slot.shard, epoch: slot.epoch, reason }, 'dropping shard');
    try {
      await slot.stop();
    } catch (err) {
      this.logger.warn({ shard: slot.shard, err: errMessage(err) }, 'shard owner did not close cleanly');
    }
    if (this.slots.get(slot.shard) === slot) this.slots.delete(slot.shard);
    await this.leases.release(slot.lease).catch((err: unknown) => {
      this.logger.warn({ shard: slot.shard, err: errMessage(err) }, 'lease release failed (it expires by itself)');
    });
  }
}
