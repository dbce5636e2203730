/**
 * The messaging deps on a fresh embedded engine, shaped as apps/server composes them, with the
 * two things these tests replace: the inbox writer (to drop follow-ups) and the loop lag.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_LIMITS,
  resolveHooks,
  silentLogger,
  systemClock,
  type InboxWriter,
  type TenantHooks,
  type TimelineStore,
} from '@seqline/core';
import { createHttpHookTransport } from '@seqline/hooks';
import { createLocalPushBus, createLocalWorkQueue, type BackoffPolicy, type LocalWorkQueue } from '@seqline/bus';
import { GroupStreamWriter, InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { conversationStreamSides, type MessagingDeps, type MessagingPolicy } from '../../src/index.ts';

export interface EmbeddedRig {
  engine: EmbeddedEngine;
  /** The real owner, also when `deps.writers.inbox` wraps it. */
  owner: InboxOwner;
  queue: LocalWorkQueue;
  deps: MessagingDeps;
  close(): Promise<void>;
}

export interface RigOptions {
  wrapInbox?: (owner: InboxOwner) => InboxWriter;
  loopLagMs?: MessagingPolicy['loopLagMs'];
  /** Per-tenant hook settings (v1.1). */
  hooks?: Record<string, TenantHooks>;
  /** The work queue's retry schedule (tests of retries and dead letters). */
  backoff?: Partial<BackoffPolicy>;
  /** Pushes carry `convs` (from the index writer, read-fanout groups' stream sides read), waiting this long for reads at most. */
  pushConvsWaitMs?: number;
  /** Wraps the timeline store the inbox owner, or messaging, reads and writes through (a counting decorator). */
  wrapTimeline?: (store: TimelineStore, user: 'owner' | 'messaging') => TimelineStore;
  /** Resends the owner answers from memory (InboxOwnerOptions.maxRecentAppinfos); 0: the store dedups every one. */
  maxRecentAppinfos?: number;
}

/** Small tiers so a few members reach every tier: small < 3 ≤ large < 5 ≤ huge. */
const TIERS = { smallBelow: 3, largeBelow: 5, maxMembers: 100, hysteresis: 0 };

export async function openEmbeddedRig(name: string, options: RigOptions = {}): Promise<EmbeddedRig> {
  const root = mkdtempSync(join(tmpdir(), `seqline-${name}-`));
  const engine = await openEmbeddedEngine({ dir: root });
  const push = createLocalPushBus();
  const owner = new InboxOwner({
    timeline: options.wrapTimeline?.(engine.timeline, 'owner') ?? engine.timeline,
    ...(options.maxRecentAppinfos !== undefined && { maxRecentAppinfos: options.maxRecentAppinfos }),
    ceilings: engine.ceilings,
    push,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    ...(options.pushConvsWaitMs !== undefined && {
      conversations: engine.conversations,
      pushConvsWaitMs: options.pushConvsWaitMs,
      streamSides: conversationStreamSides({ stores: { groups: engine.groups, groupStreams: engine.groupStreams } }),
    }),
  });
  const groupStream = new GroupStreamWriter({
    streams: engine.groupStreams,
    ceilings: engine.ceilings,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('group-writer'),
  });
  const queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger, ...(options.backoff && { backoff: options.backoff }) });
  const deps: MessagingDeps = {
    stores: {
      timeline: options.wrapTimeline?.(engine.timeline, 'messaging') ?? engine.timeline,
      groups: engine.groups,
      groupStreams: engine.groupStreams,
      conversations: engine.conversations,
    },
    writers: { inbox: options.wrapInbox?.(owner) ?? owner, groupStream },
    queue,
    push,
    policy: {
      tiers: () => TIERS,
      limits: () => DEFAULT_LIMITS,
      readFanout: true,
      ...(options.loopLagMs && { loopLagMs: options.loopLagMs }),
    },
    env: { logger: silentLogger, clock: systemClock, newId: () => `id-${Math.random().toString(36).slice(2)}` },
    hooks: { of: (tenant) => resolveHooks({}, options.hooks?.[tenant]), transport: createHttpHookTransport() },
  };
  return {
    engine,
    owner,
    queue,
    deps,
    close: async () => {
      await queue.close();
      await owner.close();
      await engine.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
