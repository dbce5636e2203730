/**
 * What AdminService reports and takes: the views its commands answer with, their options, and
 * the live queue and pool counters it reads. Split from admin.ts, which re-exports them.
 */
import type { Entry, FanoutMode, Limits, StoredJob, Tier, TierThresholds } from '@seqline/core';

/** Live counters of one consumed queue; both bus adapters' `stats()` have this shape. */
export interface QueueCounters {
  /** Jobs handed to their handler and not finished. */
  running: number;
  /** Jobs ready but held back by the consumer's bounds. */
  waiting: number;
  /** Jobs waiting out a retry backoff. */
  delayed: number;
}

/** Live counters of one worker pool (`Workers.stats().pools`): where the limits are enforced. */
export interface PoolCounters {
  running: number;
  waiting: number;
  poolLimit: number;
  perGroupLimit: number;
}

export interface TiersView {
  tiers: TierThresholds;
  version: number;
}
export interface LimitsView {
  limits: Limits;
  version: number;
}

export interface GroupShowOptions {
  /** Members listed (default 100, at most 10 000); memberCount is always the full count. */
  memberLimit?: number;
  /** List members sorting after this id (paging). */
  membersAfter?: string;
}

export interface QueueDepth {
  /** Per queue: jobs running, waiting for a worker, or waiting out a retry backoff. */
  queues: Record<string, QueueCounters>;
  /** Per worker pool: batches running, jobs waiting, and the limits in force. */
  pools: Record<string, PoolCounters>;
  /** Pending jobs (not yet succeeded) of this group; null when the queue cannot tell. */
  pendingForGroup: number | null;
}

export interface GroupView {
  tenant: string;
  id: string;
  name: string;
  /** Renames so far (0: the name given at creation). */
  nameRev: number;
  admin: string;
  tier: Tier;
  /** The tier its size alone gives (differs from `tier` inside the hysteresis band). */
  naturalTier: Tier;
  fanout: FanoutMode;
  memberCount: number;
  members: string[];
  /** More members sort after the last one listed. */
  membersTruncated: boolean;
  headGseq: number;
  createdAt: number;
  queue: QueueDepth;
}

export interface InboxView {
  tenant: string;
  user: string;
  headSeq: number;
  entries: Entry[];
  hasMore: boolean;
}

export interface DeadLetter {
  id: string;
  queue: string;
  attempts: number;
  createdAt: number;
  lastError?: string;
  payload: StoredJob['payload'];
}

export interface ReplayResult {
  replayed: string[];
  /** Ids that were not (or no longer) dead letters. */
  missing: string[];
}

export type ReplayTarget = { id: string } | 'all';
