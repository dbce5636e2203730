/** What a ShardOwnerHost (shard-owner-host.ts, which re-exports these) is given and reports. */
import type { ConversationIndex, GroupStreamStore, Logger, PushBus, SeqCeilingStore, TimelineStore } from '@seqline/core';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Redis } from 'ioredis';
import type { GuardedCatchUp, GuardedRebuilder, OwnerTuning } from './shard-writers.ts';
import type { SlotState } from './shard-slot.ts';

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
