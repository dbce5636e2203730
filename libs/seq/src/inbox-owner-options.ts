/** What an InboxOwner (inbox-owner.ts) is made with: its stores, listeners and bounds. */
import type {
  Clock,
  ConversationCatchUp,
  ConversationIndex,
  ConversationRebuilder,
  ConversationStreamSides,
  Entry,
  InboxKey,
  Logger,
  PushBus,
  SeqCeilingStore,
  TimelineStore,
} from '@seqline/core';
import type { BehindIndexLog, IndexCatchUpOptions } from './index-catch-ups.ts';
import type { KeyBudget } from './key-budget.ts';
import type { RecentAppinfos } from './recent-appinfos.ts';

export interface InboxOwnerOptions {
  timeline: TimelineStore;
  ceilings: SeqCeilingStore;
  push: PushBus;
  /**
   * The inboxes' conversation index. With it, each push carries the touched
   * conversations' states (`convs`): those the store's index writer computed in the append
   * (TimelineAppend.indexed), read from here only where the writer did not hold them (or did
   * not tell). Without it pushes carry entries only.
   */
  conversations?: ConversationIndex;
  /**
   * Adds a read-fanout group's stream side to the group states a push carries (a bounded read of
   * the group stream, as sync does). Without it group states go out as the inbox index holds
   * them: right only for a deployment without read-fanout.
   */
  streamSides?: ConversationStreamSides;
  /**
   * Told of the entries each append newly stored (never duplicates), beside its push: the one
   * place that sees every append of an inbox (offline notifications). Called synchronously,
   * never awaited; whatever it throws is logged, never failing the append.
   */
  onAppended?: (inbox: InboxKey, entries: Entry[]) => void;
  /** How long a push may wait for those reads before it goes without `convs`. Default 50 ms. */
  pushConvsWaitMs?: number;
  /** Rebuilds one inbox's index (rebuildConversations); without it that call fails INTERNAL. */
  conversationRebuilder?: ConversationRebuilder;
  /**
   * Catches up an inbox's index that trails its entries (fenced by the caller in distributed
   * mode). With it, an append whose index write failed schedules a catch-up of its inbox, in the
   * inbox's queue (index-catch-ups.ts), and `catchUpConversations` takes a predecessor's list.
   */
  conversationCatchUp?: ConversationCatchUp;
  /** Where the inboxes whose index this owner left behind are recorded for the next owner. */
  behindIndexes?: BehindIndexLog;
  /** Bounds and retries of those catch-ups. */
  indexCatchUps?: IndexCatchUpOptions;
  logger: Logger;
  clock?: Clock;
  /** Fixed for a deployment: a user's section is its shard. Default 64. */
  shardCount?: number;
  /** Shards this owner writes; default all. Appends for others fail with ShardNotOwnedError. */
  ownedShards?: number[];
  /** Owner epoch for every section it claims (from `ceilings.nextEpoch`). */
  epoch: number;
  /** Ceiling step per section. Default 10 000. */
  step?: number;
  /** Most entries merged into one store append. Default 512. */
  maxBatchEntries?: number;
  /** Most entries of failed appends kept to settle at the inbox's next head read (UnsettledAppends). Default 10 000. */
  maxUnsettledEntries?: number;
  /** Inbox state idle this long is dropped. Default 5 min. */
  idleInboxMs?: number;
  /** Above this many cached inboxes the oldest idle ones are dropped at once. Default 100 000. */
  maxCachedInboxes?: number;
  /** A bound on the cached inboxes of all the process's owners (a worker runs one per shard). */
  inboxStateBudget?: KeyBudget;
  /** appinfos remembered to answer resends without the store (RecentAppinfos). Default 100 000. */
  maxRecentAppinfos?: number;
  /**
   * A RecentAppinfos shared with the process's other owners (then `maxRecentAppinfos` is
   * ignored): a worker runs one owner per shard, and its memory bound is the worker's.
   */
  recentAppinfos?: RecentAppinfos;
  /** Most keys per section allocator (see SectionAllocator.maxKeys). */
  maxKeysPerSection?: number;
  /** Most keys remembered by this owner's section allocators together (KeyBudget). Default 4 000 000. */
  maxSeqKeys?: number;
  /**
   * A KeyBudget shared with the process's other owners and group writers (then `maxSeqKeys`
   * is ignored): a worker runs one of each per shard, and its memory bound is the worker's.
   */
  seqKeyBudget?: KeyBudget;
}
