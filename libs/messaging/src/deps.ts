import type {
  HooksOf,
  HookTransport,
  Clock,
  ConversationIndex,
  GroupStore,
  GroupStreamStore,
  InboxWriter,
  Limits,
  Logger,
  PushBus,
  SheddingPolicy,
  TierThresholds,
  TimelineStore,
  WorkQueue,
} from '@seqline/core';

// The write side of read-fanout group streams is core's port (ports.ts); messaging's callers
// still import it from here.
import type { GroupStreamAppender } from '@seqline/core';
export type { GroupStreamAppender };

/** Where messages, groups and group streams are read (and, outside the writers, stored). */
export interface MessagingStores {
  timeline: TimelineStore;
  groups: GroupStore;
  groupStreams: GroupStreamStore;
  /** The per-inbox conversation index, read only (the stores maintain it on append). */
  conversations: ConversationIndex;
}

/** The single writers: seqs of an inbox and gseqs of a group stream are allocated only here. */
export interface MessagingWriters {
  inbox: InboxWriter;
  groupStream: GroupStreamAppender;
}

/** The operator's choices; the functions are read on every use, so a change applies live. */
export interface MessagingPolicy {
  tiers: () => TierThresholds;
  /** Pool sizes, per-group concurrency and in-flight caps. */
  limits: () => Limits;
  /** Huge groups use read-fanout (one copy in a group stream) when on. */
  readFanout: boolean;
  /** Event-loop lag in ms for load shedding; default: this process's loop, measured. */
  loopLagMs?: () => number;
  /** How long a sync waits at most for the conversation index to reach its entries (default 500 ms). */
  syncConvsWaitMs?: number;
  sheddingPolicy?: SheddingPolicy;
}

/** The app's hooks: each tenant's live settings (read on every use) and how calls are made. */
export interface MessagingHooks {
  of: HooksOf;
  transport: HookTransport;
}

/** What every process provides: logs, time, ids. */
export interface MessagingEnv {
  logger: Logger;
  clock: Clock;
  /** Server-generated appinfos for control entries (read, group events) and group ids. */
  newId: () => string;
}

/**
 * Everything the messaging service and its workers run on, by concern: ports only, so embedded
 * and distributed share it. Built once per mode (apps/server embedded-deps.ts, libs/runtime
 * messaging-deps.ts); each operation declares the part it uses.
 */
export interface MessagingDeps {
  stores: MessagingStores;
  writers: MessagingWriters;
  queue: WorkQueue;
  push: PushBus;
  policy: MessagingPolicy;
  env: MessagingEnv;
  hooks: MessagingHooks;
}
