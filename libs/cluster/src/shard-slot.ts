/**
 * One owned shard inside a ShardOwnerHost: its lease, its InboxOwner and GroupStreamWriter (one
 * each per lease epoch; the shard's inboxes and its group streams have the same single writer)
 * and its `inbox.append.<shard>` subscription. Lifecycle: starting (claim both sections,
 * `inbox-shard-<n>` and `group-shard-<n>`, with the epoch, which fences the previous owner's
 * ceiling raises) → waiting (out the previous owner's lease, rule a) → serving → stopping →
 * stopped. Never restarts: a shard that comes back gets a new lease, a new epoch and a new slot.
 */
import { FencedError, chainAppends, shardOf } from '@seqline/core';
import type { AppendOutcome, FollowUpAppend, FollowUpResult, InboxKey, Logger, NewEntry } from '@seqline/core';
import type { GroupStreamWriter, InboxOwner } from '@seqline/seq';
import type { OwnerCounts } from './owner-tallies.ts';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { ShardLeaseLostError, toWireError } from './errors.ts';
import type { WireError } from './errors.ts';
import type { RedisShardLeases, ShardLease } from './shard-leases.ts';
import type { ShardBehindIndexes } from './behind-indexes.ts';
import { decodeOwnerRequest, encodeJson, routingKey } from './wire.ts';
import type { InboxReply, ReadyRequest, ShardRequest } from './wire.ts';

export type SlotState = 'starting' | 'waiting' | 'serving' | 'stopping' | 'stopped';

/** Requests being handled by one host, across its shards (no backpressure in core NATS). */
export interface InFlight {
  count: number;
  readonly max: number;
}

export interface ShardSlotDeps {
  nc: NatsConnection;
  subject: string;
  queueGroup: string;
  shardCount: number;
  leases: RedisShardLeases;
  lease: ShardLease;
  owner: InboxOwner;
  /** Writes the shard's group streams; absent when the host has no group stream store. */
  groupWriter: GroupStreamWriter | undefined;
  /** The shard's inboxes whose index a previous owner left behind; caught up once serving. */
  behind?: ShardBehindIndexes;
  inFlight: InFlight;
  logger: Logger;
  /** Monotonic clock, the one the leases use. */
  now(): number;
  /** The slot found itself unable to write (self-fenced, fenced): the host drops it. */
  onUnwritable(slot: ShardSlot, reason: string): void;
  /** The slot serves requests from now on. */
  onServing(slot: ShardSlot): void;
  /** Runs an append request's `then` once the append is durable (the host routes it). */
  followUp(outcomes: readonly AppendOutcome[], next: FollowUpAppend): Promise<FollowUpResult>;
}

export class ShardSlot {
  readonly shard: number;
  readonly lease: ShardLease;
  private stateNow: SlotState = 'starting';
  /** Takes writes: from activation until its subscription has drained. */
  private accepting = false;
  /** Requests being handled (their replies not sent yet). */
  private readonly handling = new Set<Promise<void>>();
  private sub: Subscription | undefined;
  private wake: (() => void) | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly deps: ShardSlotDeps) {
    this.lease = deps.lease;
    this.shard = deps.lease.shard;
  }

  get state(): SlotState {
    return this.stateNow;
  }
  get epoch(): number {
    return this.lease.epoch;
  }
  /** Its owner's counts (InboxOwner.indexCatchUps and .unsettledAppends), for the host's metrics. */
  get ownerCounts(): OwnerCounts {
    const { owner } = this.deps;
    return { indexCatchUps: owner.indexCatchUps, unsettledAppends: owner.unsettledAppends };
  }

  /** Claims, waits out the previous owner, subscribes. False when stopped on the way. */
  async activate(): Promise<boolean> {
    await Promise.all([this.deps.owner.start(), this.deps.groupWriter?.start()]);
    if (this.stateNow !== 'starting') return false;
    this.stateNow = 'waiting';
    // Timers may fire a little early against the monotonic clock: loop until really past.
    for (let waitMs = this.lease.writableAt - this.deps.now(); waitMs > 0; waitMs = this.lease.writableAt - this.deps.now()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.ceil(waitMs) + 1);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      if (this.stateNow !== 'waiting') return false;
    }
    if (this.stateNow !== 'waiting') return false;
    const blocker = this.deps.leases.writeBlocker(this.lease);
    if (blocker !== undefined) {
      this.deps.onUnwritable(this, blocker);
      return false;
    }
    // Subscribe only now: until the wait-out is over no request may reach this owner.
    this.sub = this.deps.nc.subscribe(this.deps.subject, {
      queue: this.deps.queueGroup,
      callback: (err, msg) => {
        if (err) this.deps.logger.warn({ shard: this.shard, err: err.message }, 'shard subscription error');
        else this.track(this.handle(msg));
      },
    });
    this.accepting = true;
    this.stateNow = 'serving';
    this.deps.logger.info({ shard: this.shard, epoch: this.epoch }, 'serving shard');
    this.deps.onServing(this);
    void this.catchUpLeftBehind();
    return true;
  }

  /**
   * Queues a catch-up of each index a previous owner recorded as left behind (behind-indexes.ts),
   * ahead of whatever reaches those inboxes later; without waiting for it to serve.
   */
  private async catchUpLeftBehind(): Promise<void> {
    const behind = this.deps.behind;
    if (behind === undefined) return;
    try {
      const inboxes = await behind.list();
      if (inboxes.length === 0) return;
      const scheduled = this.deps.owner.catchUpConversations(inboxes);
      this.deps.logger.info({ shard: this.shard, recorded: inboxes.length, scheduled }, 'catching up indexes left behind');
    } catch (err) {
      this.deps.logger.warn({ shard: this.shard, err: String(err) }, 'indexes left behind not read; their next appends catch them up');
    }
  }

  /**
   * An append from this process (a follow-up of another shard's request), under the same rule
   * (b) as a request; undefined when this slot cannot take it now, so the caller routes it over
   * NATS instead.
   */
  appendHere(inbox: InboxKey, entries: NewEntry[]): Promise<AppendOutcome[]> | undefined {
    return this.writeBlocker() === undefined ? this.deps.owner.append({ inbox, entries }) : undefined;
  }

  /**
   * Drains the subscription — requests already on their way here are still handled, not lost
   * to a 3 s caller timeout — then lets both writers finish (or fail, once fenced) what they
   * queued. Once it resolves nothing writes with this lease any more.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  /** Resolves once every request handled here has been answered (a 1:1 follow-up may still run after stop). */
  async settled(): Promise<void> {
    while (this.handling.size > 0) await Promise.all([...this.handling]);
  }

  private async doStop(): Promise<void> {
    this.stateNow = 'stopping';
    this.wake?.();
    try {
      await this.sub?.drain();
    } catch (err) {
      this.deps.logger.warn({ shard: this.shard, err: String(err) }, 'subscription drain failed');
    }
    this.accepting = false;
    await Promise.all([this.deps.owner.close(), this.deps.groupWriter?.close()]);
    this.stateNow = 'stopped';
  }

  private track(handled: Promise<void>): void {
    this.handling.add(handled);
    void handled.finally(() => this.handling.delete(handled));
  }

  private async handle(msg: Msg): Promise<void> {
    const inFlight = this.deps.inFlight;
    if (inFlight.count >= inFlight.max) {
      return respond(msg, { ok: false, error: { code: 'OVERLOADED', message: 'inbox owner overloaded', retryable: true } });
    }
    inFlight.count++;
    try {
      respond(msg, await this.serve(msg));
    } finally {
      inFlight.count--;
    }
  }

  private async serve(msg: Msg): Promise<InboxReply> {
    // Rule (b): checked before anything else, so a process that wakes from a pause refuses.
    const blocker = this.writeBlocker();
    if (blocker !== undefined) {
      if (this.stateNow === 'serving') this.deps.onUnwritable(this, blocker);
      return failure(toWireError(new ShardLeaseLostError(this.shard, blocker)));
    }
    let req: ShardRequest | ReadyRequest;
    try {
      req = decodeOwnerRequest(msg.data);
    } catch (err) {
      return failure(toWireError(err));
    }
    if (req.op === 'ready') {
      if (req.shard === this.shard) return { ok: true };
      return failure({ code: 'INTERNAL', message: `probe of shard ${req.shard} reached shard ${this.shard}`, retryable: false });
    }
    const key = routingKey(req);
    const shard = shardOf(key, this.deps.shardCount);
    if (shard !== this.shard) {
      // Caller and owner disagree on shardCount: retrying cannot help.
      return failure({ code: 'INTERNAL', message: `${key} is in shard ${shard}, not ${this.shard}`, retryable: false });
    }
    try {
      return await this.run(req);
    } catch (err) {
      if (err instanceof FencedError) this.deps.onUnwritable(this, 'fenced by a newer epoch');
      if (!(err instanceof ShardLeaseLostError)) {
        this.deps.logger.warn({ shard: this.shard, op: req.op, err: String(err) }, 'shard request failed');
      }
      return failure(toWireError(err));
    }
  }

  /** Why this slot may not write now (not serving or draining, or rule (b)), or undefined. */
  private writeBlocker(): string | undefined {
    return this.accepting ? this.deps.leases.writeBlocker(this.lease) : `shard is ${this.stateNow}`;
  }

  private async run(req: ShardRequest): Promise<InboxReply> {
    const { owner, groupWriter } = this.deps;
    switch (req.op) {
      case 'append': {
        const then = req.then;
        if (then === undefined) return { ok: true, outcomes: await owner.append({ inbox: req.inbox, entries: req.entries }) };
        const chained = await chainAppends(
          (durable) => owner.append({ inbox: req.inbox, entries: req.entries, durable }),
          (outcomes) => this.deps.followUp(outcomes, then),
        );
        return { ok: true, outcomes: chained.outcomes, then: chained.next };
      }
      case 'receipt':
        await owner.addReceipt({ inbox: req.inbox, appinfo: req.appinfo, readers: req.readers });
        return { ok: true };
      case 'head':
        return { ok: true, head: await owner.headSeq(req.inbox) };
      case 'rebuild':
        return { ok: true, rebuild: await owner.rebuildConversations(req.inbox) };
      case 'gappend':
        if (!groupWriter) return NO_GROUP_STREAMS;
        return { ok: true, outcomes: await groupWriter.append({ group: req.group, entries: req.entries }) };
      case 'ghead':
        if (!groupWriter) return NO_GROUP_STREAMS;
        return { ok: true, head: await groupWriter.headSeq(req.group) };
    }
  }
}

/** A misconfigured deployment (this host was built without a group stream store): not retried. */
const NO_GROUP_STREAMS: InboxReply = {
  ok: false,
  error: { code: 'INTERNAL', message: 'this shard owner has no group stream store', retryable: false },
};

function failure(error: WireError): InboxReply {
  return { ok: false, error };
}

function respond(msg: Msg, reply: InboxReply): void {
  if (msg.reply) msg.respond(encodeJson(reply));
}
