/**
 * The single writers of one leased shard: its InboxOwner and, given a group stream store, its
 * GroupStreamWriter. Both write through fences that check the lease before every write, and
 * both claim their sections with the lease's epoch.
 */
import { groupStreamOf, timelineOf } from '@seqline/core';
import type {
  ConversationCatchUp,
  ConversationIndex,
  ConversationRebuilder,
  ConversationRebuildReport,
  GroupStreamStore,
  InboxKey,
  Logger,
  PushBus,
  SeqCeilingStore,
  TimelineStore,
  WriteGuard,
} from '@seqline/core';
import { DEFAULT_MAX_SEQ_KEYS, GroupStreamWriter, InboxOwner, KeyBudget, RecentAppinfos } from '@seqline/seq';
import type { InboxOwnerOptions } from '@seqline/seq';
import { FencedGroupStreamStoreWriter } from './fenced-group-stream.ts';
import { ShardLeaseLostError } from './errors.ts';
import { FencedTimelineWriter, leaseGuard } from './fenced-timeline.ts';
import type { ShardLease } from './shard-leases.ts';
import type { RedisBehindIndexes, ShardBehindIndexes } from './behind-indexes.ts';

/**
 * Per host, not per shard: `maxRecentAppinfos` bounds its one RecentAppinfos, `maxSeqKeys` the
 * seqs its allocators remember, `maxCachedInboxes` the inbox states of all its owners.
 */
export type OwnerTuning = Pick<
  InboxOwnerOptions,
  | 'step'
  | 'maxBatchEntries'
  | 'idleInboxMs'
  | 'maxCachedInboxes'
  | 'maxRecentAppinfos'
  | 'maxKeysPerSection'
  | 'maxSeqKeys'
  | 'clock'
  | 'pushConvsWaitMs'
  | 'onAppended'
  | 'streamSides'
  | 'indexCatchUps'
>;

/** What the shard writers of one process share: each bound is the process's, not a shard's. */
export interface SharedWriterMemory {
  recentAppinfos: RecentAppinfos;
  /** The seqs its section allocators remember. */
  seqKeyBudget: KeyBudget;
  /** Its owners' inbox states. */
  inboxStateBudget: KeyBudget;
}

export function sharedWriterMemory(tuning: OwnerTuning | undefined): SharedWriterMemory {
  return {
    recentAppinfos: new RecentAppinfos(tuning?.maxRecentAppinfos ?? 100_000),
    seqKeyBudget: new KeyBudget(tuning?.maxSeqKeys ?? DEFAULT_MAX_SEQ_KEYS),
    inboxStateBudget: new KeyBudget(tuning?.maxCachedInboxes ?? 100_000),
  };
}

/** A store's index rebuild that takes the writer's guard, as its appends do (CQL checks it before each write). */
export interface GuardedRebuilder {
  rebuildConversations(input: { inbox: InboxKey; guard?: WriteGuard }): Promise<ConversationRebuildReport>;
}

/** A store's index catch-up that takes the writer's guard, as its appends do (CqlTimelineStore.catchUpConversations). */
export interface GuardedCatchUp {
  catchUpConversations(input: { inbox: InboxKey; guard?: WriteGuard }): Promise<number>;
}

export interface ShardWriterSources extends SharedWriterMemory {
  timeline: TimelineStore;
  /** The conversation index the owners read for push `convs`; none: pushes carry entries only. */
  conversations?: ConversationIndex;
  /** Rebuilds an inbox's conversation index; run by the shard's owner under its lease. */
  conversationRebuilder?: GuardedRebuilder;
  /** Catches up an inbox's index left behind; run by the shard's owner under its lease. */
  conversationCatchUp?: GuardedCatchUp;
  /** Where each shard's inboxes with an index left behind are recorded (with `conversationCatchUp`). */
  behindIndexes?: RedisBehindIndexes;
  groupStreams?: GroupStreamStore;
  ceilings: SeqCeilingStore;
  push: PushBus;
  logger: Logger;
  shardCount: number;
  ownerOptions?: OwnerTuning;
  /** Why `lease` may not be written under now, or undefined when it may. */
  writeBlocker(lease: ShardLease): string | undefined;
}

export function shardWriters(
  lease: ShardLease,
  src: ShardWriterSources,
): { owner: InboxOwner; groupWriter: GroupStreamWriter | undefined; behind: ShardBehindIndexes | undefined } {
  const blocker = () => src.writeBlocker(lease);
  const logger = src.logger.child({ shard: lease.shard });
  const catchUp = src.conversationCatchUp && fencedCatchUp(src.conversationCatchUp, lease, blocker);
  const behind = catchUp && src.behindIndexes?.forShard(lease.shard);
  const owner = new InboxOwner({
    ...src.ownerOptions,
    recentAppinfos: src.recentAppinfos,
    seqKeyBudget: src.seqKeyBudget,
    inboxStateBudget: src.inboxStateBudget,
    timeline: timelineOf({ reader: src.timeline, writer: new FencedTimelineWriter(src.timeline, lease.shard, blocker, lease.epoch) }),
    ceilings: src.ceilings,
    push: src.push,
    conversations: src.conversations,
    conversationRebuilder: src.conversationRebuilder && fencedRebuilder(src.conversationRebuilder, lease, blocker),
    conversationCatchUp: catchUp,
    behindIndexes: behind,
    logger,
    shardCount: src.shardCount,
    ownedShards: [lease.shard],
    epoch: lease.epoch,
  });
  // Same lease epoch for both sections: only the holder of shard-<n> ever claims group-shard-<n>,
  // and nextEpoch('shard-<n>') strictly increases, so a successor's claim always wins.
  const groupWriter =
    src.groupStreams &&
    new GroupStreamWriter({
      streams: groupStreamOf({
        reader: src.groupStreams,
        writer: new FencedGroupStreamStoreWriter(src.groupStreams, lease.shard, blocker, lease.epoch),
      }),
      ceilings: src.ceilings,
      logger,
      epoch: lease.epoch,
      shardCount: src.shardCount,
      ownedShards: [lease.shard],
      step: src.ownerOptions?.step,
      maxBatchEntries: src.ownerOptions?.maxBatchEntries,
      seqKeyBudget: src.seqKeyBudget,
    });
  return { owner, groupWriter, behind };
}

/** The rebuild fenced like an append: refused once the lease is lost, and the lease checked before each of its writes. */
function fencedRebuilder(inner: GuardedRebuilder, lease: ShardLease, blocker: () => string | undefined): ConversationRebuilder {
  return {
    rebuildConversations(inbox) {
      const lost = blocker();
      if (lost !== undefined) return Promise.reject(new ShardLeaseLostError(lease.shard, lost));
      return inner.rebuildConversations({ inbox, guard: leaseGuard(lease.shard, lease.epoch, blocker) });
    },
  };
}

/** The catch-up fenced like an append: refused once the lease is lost, and the lease checked before each of its writes. */
function fencedCatchUp(inner: GuardedCatchUp, lease: ShardLease, blocker: () => string | undefined): ConversationCatchUp {
  return {
    catchUpConversations({ inbox }) {
      const lost = blocker();
      if (lost !== undefined) return Promise.reject(new ShardLeaseLostError(lease.shard, lost));
      return inner.catchUpConversations({ inbox, guard: leaseGuard(lease.shard, lease.epoch, blocker) });
    },
  };
}
