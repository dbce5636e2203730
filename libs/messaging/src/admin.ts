/**
 * AdminService: what an operator may see and change (the admin HTTP API serves it; the
 * `seqline-admin` CLI calls that). Built over ports only, so the same service runs on the
 * embedded engine and on the distributed stores. Callers are already authorized as admins.
 */
import {
  BadRequestError,
  fanoutModeFor,
  groupKey,
  inboxKey,
  NotFoundError,
  naturalTier,
  type GroupStore,
  type GroupStreamStore,
  type JobStore,
  type Limits,
  type Logger,
  type TierThresholds,
  type TimelineStore,
  type WorkQueue,
} from '@seqline/core';
import { checkId, checkLimit, isObject, requireSomething } from './admin-checks.ts';
import { AdminConversations, type AdminConversationDeps, type InboxConversationsView, type RebuildView } from './admin-conversations.ts';
import { AdminHooks, type AdminHooksDeps } from './admin-hooks.ts';
import { AdminJobs } from './admin-jobs.ts';
import type {
  DeadLetter,
  GroupShowOptions,
  GroupView,
  InboxView,
  LimitsView,
  PoolCounters,
  QueueCounters,
  ReplayResult,
  ReplayTarget,
  TiersView,
} from './admin-views.ts';
import type { MessagingDeps, MessagingEnv, MessagingPolicy } from './deps.ts';
import type { LiveSettings } from './live-settings.ts';

export type * from './admin-views.ts';

/** `conversations` and `inboxWriter` (AdminConversationDeps) serve the conversation index commands; `hooksOf` the hooks ones. */
export interface AdminDeps extends AdminConversationDeps, AdminHooksDeps {
  settings: Pick<LiveSettings, 'current' | 'update'>;
  timeline: TimelineStore;
  groups: GroupStore;
  groupStreams: GroupStreamStore;
  queue: WorkQueue;
  /** Live per-queue counters of this process's consumers, when the queue adapter has them (a threaded process asks its threads). */
  queueStats?: () => Record<string, QueueCounters> | Promise<Record<string, QueueCounters>>;
  /** Live counters of this process's worker pools (pool size and per-group bound in force). */
  poolStats?: () => Record<string, PoolCounters> | Promise<Record<string, PoolCounters>>;
  /** The pending jobs, when they sit in a store that can list them (embedded): per-group depth. */
  jobs?: Pick<JobStore, 'list'>;
  /** Whether huge groups use read-fanout (reported by `groupShow`). */
  readFanout: boolean;
  logger: Logger;
}

/**
 * The admin deps over the stores, queue and policy the messaging service of this process runs
 * on (one composition per mode); `local` adds what only this process can observe.
 */
export function adminDepsOf(
  d: Pick<MessagingDeps, 'stores' | 'queue' | 'writers'> & {
    policy: Pick<MessagingPolicy, 'readFanout'>;
    env: Pick<MessagingEnv, 'logger'>;
    hooks?: Pick<MessagingDeps['hooks'], 'of'>;
  },
  settings: AdminDeps['settings'],
  local: Pick<AdminDeps, 'queueStats' | 'poolStats' | 'jobs'> = {},
): AdminDeps {
  const { timeline, groups, groupStreams, conversations } = d.stores;
  const { queue, writers } = d;
  return {
    settings,
    timeline,
    groups,
    groupStreams,
    conversations,
    inboxWriter: writers.inbox,
    queue,
    readFanout: d.policy.readFanout,
    logger: d.env.logger,
    hooksOf: d.hooks?.of,
    ...local,
  };
}

export class AdminService {
  private readonly conversations: AdminConversations;
  readonly hooks: AdminHooks;
  /** The pending jobs (`GET /v1/admin/jobs`). */
  readonly jobs: AdminJobs;

  constructor(private readonly d: AdminDeps) {
    this.conversations = new AdminConversations(d);
    this.hooks = new AdminHooks(d);
    this.jobs = new AdminJobs(d);
  }

  tiersShow(): TiersView {
    const s = this.d.settings.current();
    return { tiers: s.tiers, version: s.version };
  }

  async tiersSet(patch: Partial<TierThresholds>): Promise<TiersView> {
    requireSomething(patch, 'tiers');
    const s = await this.d.settings.update({ tiers: patch });
    return { tiers: s.tiers, version: s.version };
  }

  limitsShow(): LimitsView {
    const s = this.d.settings.current();
    return { limits: s.limits, version: s.version };
  }

  async limitsSet(patch: Partial<Limits>): Promise<LimitsView> {
    requireSomething(patch, 'limits');
    const s = await this.d.settings.update({ limits: patch });
    return { limits: s.limits, version: s.version };
  }

  async groupShow(tenant: string, id: string, options: GroupShowOptions = {}): Promise<GroupView> {
    checkId('tenant', tenant);
    checkId('group', id);
    const memberLimit = checkLimit(options.memberLimit ?? 100, 'memberLimit');
    const key = groupKey(tenant, id);
    const group = await this.d.groups.getGroup(key);
    if (group === null) throw new NotFoundError(`group ${id} not found in tenant ${tenant}`);
    const [all, headGseq, pendingForGroup] = await Promise.all([
      this.d.groups.listMembers(key),
      this.d.groupStreams.headSeq(key),
      this.pendingJobsOf(key),
    ]);
    const after = options.membersAfter;
    const from = after === undefined ? all : all.filter((user) => user > after);
    return {
      tenant,
      id,
      name: group.name,
      nameRev: group.nameRev ?? 0,
      admin: group.admin,
      tier: group.tier,
      naturalTier: naturalTier(group.memberCount, this.d.settings.current().tiers),
      fanout: fanoutModeFor(group.tier, this.d.readFanout),
      memberCount: group.memberCount,
      members: from.slice(0, memberLimit),
      membersTruncated: from.length > memberLimit,
      headGseq,
      createdAt: group.createdAt,
      queue: { ...(await this.queueCounters()), pendingForGroup },
    };
  }

  async inbox(tenant: string, user: string, after: number, limit: number): Promise<InboxView> {
    checkId('tenant', tenant);
    checkId('user', user);
    if (!Number.isSafeInteger(after) || after < 0) throw new BadRequestError(`after must be a non-negative integer, got ${after}`);
    checkLimit(limit, 'limit');
    const key = inboxKey(tenant, user);
    // One extra entry tells whether there is more without a second read.
    const [entries, headSeq] = await Promise.all([
      this.d.timeline.readAfter({ inbox: key, afterSeq: after, limit: limit + 1 }),
      this.d.timeline.headSeq(key),
    ]);
    return { tenant, user, headSeq, entries: entries.slice(0, limit), hasMore: entries.length > limit };
  }

  /** The inbox's conversation index, checked against a recount of the inbox. */
  inboxConversations(tenant: string, user: string): Promise<InboxConversationsView> {
    checkId('tenant', tenant);
    checkId('user', user);
    return this.conversations.view(tenant, user);
  }

  /** Rebuilds the inbox's conversation index through its single writer; says what differed. */
  async rebuildConversations(tenant: string, user: string): Promise<RebuildView> {
    checkId('tenant', tenant);
    checkId('user', user);
    const view = await this.conversations.rebuild(tenant, user);
    this.d.logger.info({ tenant, user, differed: view.differed, changed: view.changedConversations.length }, 'conversation index rebuilt');
    return view;
  }

  async deadLetters(): Promise<DeadLetter[]> {
    const dead = await this.d.queue.deadLetters();
    return dead.map((job) => ({
      id: job.id,
      queue: job.queue,
      attempts: job.attempts,
      createdAt: job.createdAt,
      ...(job.lastError === undefined ? {} : { lastError: job.lastError }),
      payload: job.payload,
    }));
  }

  /** Moves dead letters back to their queue with a fresh retry budget. */
  async replay(target: ReplayTarget, onProgress?: (done: number, total: number) => void): Promise<ReplayResult> {
    const ids = target === 'all' ? (await this.d.queue.deadLetters()).map((job) => job.id) : [target.id];
    const result: ReplayResult = { replayed: [], missing: [] };
    for (const [i, id] of ids.entries()) {
      if (await this.d.queue.replay(id)) result.replayed.push(id);
      else result.missing.push(id);
      onProgress?.(i + 1, ids.length);
    }
    this.d.logger.info({ replayed: result.replayed.length, missing: result.missing.length }, 'dead letters replayed');
    return result;
  }

  /** Live counters of the queues and worker pools of this process ({} where there are none). */
  async queueCounters(): Promise<{ queues: Record<string, QueueCounters>; pools: Record<string, PoolCounters> }> {
    const queues: Record<string, QueueCounters> = {};
    for (const [name, q] of Object.entries((await this.d.queueStats?.()) ?? {})) {
      queues[name] = { running: q.running, waiting: q.waiting, delayed: q.delayed };
    }
    const pools: Record<string, PoolCounters> = {};
    for (const [name, p] of Object.entries((await this.d.poolStats?.()) ?? {})) {
      pools[name] = { running: p.running, waiting: p.waiting, poolLimit: p.poolLimit, perGroupLimit: p.perGroupLimit };
    }
    return { queues, pools };
  }

  /** Scans the pending jobs (an operator's occasional look, so a scan is acceptable). */
  private async pendingJobsOf(key: string): Promise<number | null> {
    if (this.d.jobs === undefined) return null;
    const pending = await this.d.jobs.list({});
    return pending.filter((job) => isObject(job.payload) && job.payload['groupKey'] === key).length;
  }
}
