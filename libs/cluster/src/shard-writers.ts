/**
 * The single writers of one leased shard: its InboxOwner and, given a group stream store, its
 * GroupStreamWriter. Both write through fences that check the lease before every write, and
 * both claim their sections with the lease's epoch.
 */
import type { GroupStreamStore, Logger, PushBus, SeqCeilingStore, TimelineStore } from '@seqline/core';
import { GroupStreamWriter, InboxOwner, type RecentAppinfos, type SeqKeyBudget } from '@seqline/seq';
import type { InboxOwnerOptions } from '@seqline/seq';
import { FencedGroupStreamStore } from './fenced-group-stream.ts';
import { FencedTimelineStore } from './fenced-timeline.ts';
import type { ShardLease } from './shard-leases.ts';

/**
 * `maxRecentAppinfos` bounds the host's one RecentAppinfos, and `maxSeqKeys` its one
 * SeqKeyBudget, each shared by all its shard writers.
 */
export type OwnerTuning = Pick<
  InboxOwnerOptions, 'step' | 'maxBatchEntries' | 'idleInboxMs' | 'maxCachedInboxes' | 'maxRecentAppinfos' | 'maxKeysPerSection' | 'maxSeqKeys' | 'clock'
>;

export interface ShardWriterSources {
  timeline: TimelineStore;
  groupStreams?: GroupStreamStore;
  ceilings: SeqCeilingStore;
  push: PushBus;
  logger: Logger;
  shardCount: number;
  ownerOptions?: OwnerTuning;
  /** The process's recent appinfos, shared by the owners of all its shards. */
  recentAppinfos: RecentAppinfos;
  /** The process's bound on the keys its seq allocators remember, shared likewise. */
  seqKeyBudget: SeqKeyBudget;
  /** Why `lease` may not be written under now, or undefined when it may. */
  writeBlocker(lease: ShardLease): string | undefined;
}

export function shardWriters(lease: ShardLease, src: ShardWriterSources): { owner: InboxOwner; groupWriter: GroupStreamWriter | undefined } {
  const blocker = () => src.writeBlocker(lease);
  const logger = src.logger.child({ shard: lease.shard });
  const owner = new InboxOwner({
    ...src.ownerOptions,
    recentAppinfos: src.recentAppinfos,
    seqKeyBudget: src.seqKeyBudget,
    timeline: new FencedTimelineStore(src.timeline, lease.shard, blocker, lease.epoch),
    ceilings: src.ceilings,
    push: src.push,
    logger,
    shardCount: src.shardCount,
    ownedShards: [lease.shard],
    epoch: lease.epoch,
  });
  // Same lease epoch for both sections: only the holder of shard-<n> ever claims group-shard-<n>,
  // and nextEpoch('shard-<n>') strictly increases, so a successor's claim always wins.
  const groupWriter = src.groupStreams && new GroupStreamWriter({
    streams: new FencedGroupStreamStore(src.groupStreams, lease.shard, blocker, lease.epoch),
    ceilings: src.ceilings,
    logger,
    epoch: lease.epoch,
    shardCount: src.shardCount,
    ownedShards: [lease.shard],
    step: src.ownerOptions?.step,
    maxBatchEntries: src.ownerOptions?.maxBatchEntries,
    seqKeyBudget: src.seqKeyBudget,
  });
  return { owner, groupWriter };
}
