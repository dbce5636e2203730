import type {
  Clock, GroupStore, GroupStreamStore, InboxWriter, Logger, PushBus, TierThresholds,
  TimelineStore, WorkQueue,
} from '@seqline/core';

/** Everything the messaging service runs on: ports, so embedded and distributed share it. */
export interface MessagingDeps {
  writer: InboxWriter;
  timeline: TimelineStore;
  groups: GroupStore;
  groupStreams: GroupStreamStore;
  queue: WorkQueue;
  push: PushBus;
  logger: Logger;
  clock: Clock;
  /** Read on every use so an operator's change applies without restart. */
  tiers: () => TierThresholds;
  /** Huge groups use read-fanout (one copy in a group stream) when on. */
  readFanout: boolean;
  /** Server-generated appinfos for control entries (read, group events). */
  newId: () => string;
}
