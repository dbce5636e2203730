/**
 * The embedded stack as apps/server composes it for offline notifications — LMDB engine, inbox
 * owner with the OfflineNotifier as its append listener, local push bus and work queue, the
 * workers — with what these tests steer: a clock the queue reads (so its give-up window passes
 * without waiting), short retry delays, each tenant's hook settings, and a short call timeout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS, inboxKey, resolveHooks, silentLogger, type Clock, type TenantHooks } from '@seqline/core';
import { createHttpHookTransport } from '@seqline/hooks';
import { createLocalPushBus, createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus';
import { GroupStreamWriter, InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import {
  createMessaging,
  OfflineNotifier,
  startWorkers,
  type Messaging,
  type MessagingDeps,
  type MessagingStores,
  type Workers,
} from '../../src/index.ts';

export const NOTIFY_SECRET = 'notify-secret-0123456789abcdef';
/** The queue's give-up window in these tests (the default, 30 min). */
export const GIVE_UP_MS = 30 * 60_000;
/** How long one notify call may take here before it counts as failed. */
export const CALL_TIMEOUT_MS = 300;

/** Wall time plus an offset the test moves forward. */
export class SteppedClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
}

export interface NotifyRig {
  engine: EmbeddedEngine;
  owner: InboxOwner;
  queue: LocalWorkQueue;
  notifier: OfflineNotifier;
  deps: MessagingDeps;
  messaging: Messaging;
  workers: Workers;
  clock: SteppedClock;
  /** Each tenant's hook settings, read live (change them during a test). */
  hooks: Map<string, TenantHooks>;
  close(): Promise<void>;
}

/** Small tiers so a few members reach every tier: small < 3 ≤ large < 5 ≤ huge (read-fanout). */
const TIERS = { smallBelow: 3, largeBelow: 5, maxMembers: 100, hysteresis: 0 };

export async function openNotifyRig(
  name: string,
  options: {
    maxItemsPerWindow?: number;
    giveUpAfterMs?: number;
    /** The stores the workers (so the notification jobs) read through, e.g. counting reads. */
    workerStores?: (stores: MessagingStores) => MessagingStores;
  } = {},
): Promise<NotifyRig> {
  const { giveUpAfterMs = GIVE_UP_MS, workerStores, ...notifierOptions } = options;
  const root = mkdtempSync(join(tmpdir(), `seqline-${name}-`));
  const engine = await openEmbeddedEngine({ dir: root });
  const clock = new SteppedClock();
  const hooks = new Map<string, TenantHooks>();
  const of = (tenant: string) => resolveHooks({}, hooks.get(tenant));
  const push = createLocalPushBus();
  // Retries every 20–100 ms of real time; the give-up window counts those retries (no clock).
  const queue = createLocalWorkQueue({
    jobs: engine.jobs,
    logger: silentLogger,
    clock,
    backoff: { initialMs: 20, maxMs: 100, giveUpAfterMs },
  });
  const notifier = new OfflineNotifier({ queue, hooks: { of }, presence: push, logger: silentLogger, ...notifierOptions });
  const owner = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    conversations: engine.conversations,
    push,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    onAppended: notifier.listener,
  });
  const groupStream = new GroupStreamWriter({
    streams: engine.groupStreams,
    ceilings: engine.ceilings,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('group-writer'),
  });
  let ids = 0;
  const deps: MessagingDeps = {
    stores: { timeline: engine.timeline, groups: engine.groups, groupStreams: engine.groupStreams, conversations: engine.conversations },
    writers: { inbox: owner, groupStream },
    queue,
    push,
    policy: { tiers: () => TIERS, limits: () => DEFAULT_LIMITS, readFanout: true },
    env: { logger: silentLogger, clock, newId: () => `id${++ids}` },
    hooks: { of, transport: createHttpHookTransport() },
  };
  const messaging = createMessaging(deps);
  const workerDeps = workerStores === undefined ? deps : { ...deps, stores: workerStores(deps.stores) };
  const workers = await startWorkers(workerDeps, { offlineNotifyTimeoutMs: CALL_TIMEOUT_MS, pokeMs: 20 });
  return {
    engine,
    owner,
    queue,
    notifier,
    deps,
    messaging,
    workers,
    clock,
    hooks,
    close: async () => {
      workers.stop();
      await notifier.close();
      await queue.close();
      await groupStream.close();
      await owner.close();
      await engine.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** What a notify call carried. */
export interface NotifyBody {
  type: string;
  tenant: string;
  user: string;
  badge: number;
  entries: Array<{ seq: number; conv: { type: string; id: string }; from: string; appinfo: string; mention: boolean; preview?: string }>;
}

/** The user's total unread as the `conversations` op reports it (one page: these tests have few). */
export async function badgeOf(rig: NotifyRig, tenant: string, user: string): Promise<number> {
  const page = await rig.messaging.conversations({ tenant, user }, { limit: 500, lastMessages: 0 });
  return page.convs.reduce((n, c) => n + c.state.unread, 0);
}

export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function inboxOf(tenant: string, user: string) {
  return inboxKey(tenant, user);
}

/**
 * Tenants whose notifications go to `receiver` (each call of `tenant` makes a fresh one), and
 * the calls a tenant's bob was sent, in arrival order.
 */
export function notifiedTenants(
  rig: NotifyRig,
  receiver: { url: string; accepted(): Array<{ json: unknown }> },
  prefix: string,
  windowMs: number,
): { tenant(): string; callsTo(tenant: string): NotifyBody[] } {
  let tenants = 0;
  return {
    tenant() {
      const t = `${prefix}${++tenants}`;
      rig.hooks.set(t, { notifyUrl: receiver.url, secret: NOTIFY_SECRET, notifyWindowMs: windowMs });
      return t;
    },
    callsTo: (t) =>
      receiver
        .accepted()
        .map((c) => c.json as NotifyBody)
        .filter((b) => b.tenant === t && b.user === 'bob'),
  };
}
