import type {
  AppendOutcome, Clock, GroupKey, GroupStore, GroupStreamStore, InboxWriter, Limits, Logger, NewEntry,
  PushBus, SheddingPolicy, TierThresholds, TimelineStore, WorkQueue,
} from '@seqline/core';

/**
 * The write side of read-fanout group streams: the single writer that allocates gseqs
 * (`GroupStreamWriter` in @seqline/seq). A port in all but location: it belongs next to
 * InboxWriter in core's ports once the distributed writer lands.
 */
export interface GroupStreamAppender {
  /** Idempotent by appinfo; outcomes align with entries; `prevSeq` is set for new entries. */
  append(group: GroupKey, entries: NewEntry[]): Promise<Array<AppendOutcome & { prevSeq?: number }>>;
  /** The head after every append queued before the call (a window bound for membership changes). */
  headSeq(group: GroupKey): Promise<number>;
}

/** Everything the messaging service runs on: ports, so embedded and distributed share it. */
export interface MessagingDeps {
  writer: InboxWriter;
  timeline: TimelineStore;
  groups: GroupStore;
  groupStreams: GroupStreamStore;
  groupWriter: GroupStreamAppender;
  queue: WorkQueue;
  push: PushBus;
  logger: Logger;
  clock: Clock;
  /** Read on every use so an operator's change applies without restart. */
  tiers: () => TierThresholds;
  /** Pool sizes and per-group concurrency; read on every use (live). */
  limits: () => Limits;
  /** Huge groups use read-fanout (one copy in a group stream) when on. */
  readFanout: boolean;
  /** Server-generated appinfos for control entries (read, group events). */
  newId: () => string;
  /** Event-loop lag in ms for load shedding; default: this process's loop, measured. */
  loopLagMs?: () => number;
  sheddingPolicy?: SheddingPolicy;
}
