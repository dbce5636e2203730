import {
  actsAsGroupAdmin,
  assertGroupSize,
  BadRequestError,
  buildGroupEventEntry,
  fanoutModeFor,
  ForbiddenError,
  groupCreateAppinfo,
  groupEventAppinfo,
  groupEventJobId,
  groupKey,
  isCurrentMember,
  isServerMadeId,
  NotFoundError,
  tierFor,
  type FanoutMode,
  type GroupEventInput,
  type GroupKey,
  type GroupRecord,
  type Json,
  type NewEntry,
  type Tier,
  type WorkQueue,
} from '@seqline/core';
import type { Caller, GroupInfo } from './api.ts';
import type { MessagingContext } from './context.ts';
import type { MessagingEnv, MessagingPolicy, MessagingStores, MessagingWriters } from './deps.ts';
import { fanoutQueueFor, toJson, type FanoutJob } from './queues.ts';

/**
 * Group rules (recorded in docs/decisions.md): the creator is the admin; any current member may
 * add members; only the admin removes others, and anyone may remove themself (leave); only the
 * admin renames (group-rename.ts).
 */
export type GroupReadDeps = { stores: Pick<MessagingStores, 'groups'> };

/** Creating a group: its record and members, the creation event through the tier's queue. */
export type CreateGroupDeps = GroupReadDeps & {
  queue: WorkQueue;
  policy: Pick<MessagingPolicy, 'tiers'>;
  env: Pick<MessagingEnv, 'clock' | 'newId'>;
};

/** A membership change also bounds windows by the stream head and may switch fanout mode. */
export type ChangeMembersDeps = Pick<MessagingContext, 'membershipLocks' | 'queue'> &
  GroupReadDeps & {
    writers: Pick<MessagingWriters, 'groupStream'>;
    policy: Pick<MessagingPolicy, 'tiers' | 'readFanout'>;
    env: MessagingEnv;
  };

export type GroupInfoDeps = { stores: Pick<MessagingStores, 'groups' | 'groupStreams'>; policy: Pick<MessagingPolicy, 'readFanout'> };

export async function requireGroup(d: GroupReadDeps, key: GroupKey, id: string): Promise<GroupRecord> {
  const g = await d.stores.groups.getGroup(key);
  if (!g) throw new NotFoundError(`group ${id} not found`);
  return g;
}

async function requireMember(d: GroupReadDeps, key: GroupKey, caller: Caller, id: string): Promise<void> {
  if (!isCurrentMember(await d.stores.groups.getMembership({ key, user: caller.user }))) {
    throw new ForbiddenError(`not a member of group ${id}`);
  }
}

/** Writes a `group` control entry into the given members' inboxes, through the group's tier queue. */
export async function announce(
  d: { queue: WorkQueue },
  tenant: string,
  key: GroupKey,
  tier: Tier,
  recipients: string[],
  entry: NewEntry,
): Promise<void> {
  if (recipients.length === 0) return;
  const job: FanoutJob = { tenant, groupKey: key, entry, recipients };
  await d.queue.enqueue({
    queue: fanoutQueueFor(tier),
    id: groupEventJobId({ tenant, group: entry.conv.id, appinfo: entry.appinfo }),
    payload: toJson(job),
  });
}

/**
 * A membership event. In a huge group its member list is replaced by `count`: the entry goes
 * only to the members concerned (see changeMembers), who learn the rest from group.info.
 */
function groupEvent(tier: Tier, input: GroupEventInput & { members: string[] }): NewEntry {
  if (tier !== 'huge') return buildGroupEventEntry(input);
  const { members, ...rest } = input;
  return withBody(buildGroupEventEntry(rest), { count: members.length });
}

function withBody(entry: NewEntry, extra: { [key: string]: Json }): NewEntry {
  const body = typeof entry.body === 'object' && entry.body !== null && !Array.isArray(entry.body) ? entry.body : {};
  return { ...entry, body: { ...body, ...extra } };
}

/**
 * The switch point of a group that changed fanout mode. Into read-fanout: messages from
 * `fromGseq` on are in the group stream. Back to write-fanout: the stream ends at `upToGseq`
 * (page it up to there; later messages arrive in the inbox). See docs/large-groups.md.
 */
export function buildTierEntry(input: {
  group: string;
  actor: string;
  tier: Tier;
  fanout: FanoutMode;
  gseq: number;
  time: number;
  appinfo: string;
}): NewEntry {
  const base = buildGroupEventEntry({
    group: input.group,
    actor: input.actor,
    event: 'tier',
    tier: input.tier,
    time: input.time,
    appinfo: input.appinfo,
  });
  const bound: { [key: string]: Json } = input.fanout === 'read' ? { fromGseq: input.gseq } : { upToGseq: input.gseq };
  return withBody(base, { fanout: input.fanout, ...bound });
}

export async function createGroup(
  d: CreateGroupDeps,
  caller: Caller,
  input: { name: string; members: string[]; id?: string },
): Promise<{ id: string; tier: Tier }> {
  if (input.id !== undefined && isServerMadeId(input.id)) {
    throw new BadRequestError('a chosen group id may not have the form of a server-made id (UUIDv7)');
  }
  const id = input.id ?? d.env.newId();
  const key = groupKey(caller.tenant, id);
  const members = [...new Set([caller.user, ...input.members])].sort();
  const t = d.policy.tiers();
  assertGroupSize(members.length, t);
  const tier = tierFor(members.length, undefined, t);
  const now = d.env.clock.now();
  const record: GroupRecord = {
    key,
    tenant: caller.tenant,
    id,
    name: input.name,
    admin: caller.user,
    tier,
    memberCount: members.length,
    createdAt: now,
  };
  if (!(await d.stores.groups.createGroup({ group: record, members, at: { time: now, gseq: 0 } }))) {
    throw new BadRequestError(`group ${id} already exists`);
  }
  // Every member must learn it is in a group once, so creation is announced even to a huge one
  // (without its member list: 10 000 ids in each of 10 000 inboxes is what degradation avoids).
  const entry = groupEvent(tier, {
    group: id,
    actor: caller.user,
    event: 'create',
    members,
    name: input.name,
    nameRev: 0,
    tier,
    time: now,
    appinfo: groupCreateAppinfo(id),
  });
  await announce(d, caller.tenant, key, tier, members, entry);
  return { id, tier };
}

export async function changeMembers(
  d: ChangeMembersDeps,
  caller: Caller,
  id: string,
  members: string[],
  op: 'add' | 'remove',
): Promise<{ tier: Tier; memberCount: number }> {
  const key = groupKey(caller.tenant, id);
  const unique = [...new Set(members)];
  return d.membershipLocks.run(key, () => applyChange(d, caller, key, id, unique, op));
}

/**
 * Runs under the group's membership lock. The caller's rights are checked here, under the
 * lock, so a concurrent leave or removal of the caller is seen before the change applies.
 */
async function applyChange(
  d: Omit<ChangeMembersDeps, 'membershipLocks'>,
  caller: Caller,
  key: GroupKey,
  id: string,
  unique: string[],
  op: 'add' | 'remove',
): Promise<{ tier: Tier; memberCount: number }> {
  const group = await requireGroup(d, key, id);
  const membership = await d.stores.groups.getMembership({ key, user: caller.user });
  if (!isCurrentMember(membership)) throw new ForbiddenError(`not a member of group ${id}`);
  if (op === 'remove' && !actsAsGroupAdmin(group.admin, caller.user, membership) && unique.some((m) => m !== caller.user)) {
    throw new ForbiddenError('only the group admin removes other members');
  }
  const t = d.policy.tiers();
  if (op === 'add') {
    const before = await d.stores.groups.listMembers(key);
    assertGroupSize(new Set([...before, ...unique]).size, t);
  }
  // The head after every append already queued: window bounds are ordered with the stream.
  const at = { time: d.env.clock.now(), gseq: await d.writers.groupStream.headSeq(key) };
  const changed =
    op === 'add'
      ? await d.stores.groups.addMembers({ key, users: unique, at })
      : await d.stores.groups.removeMembers({ key, users: unique, at });
  const after = await d.stores.groups.listMembers(key);
  const tier = tierFor(after.length, group.tier, t);
  await d.stores.groups.updateGroup({ key, patch: { memberCount: after.length, tier } });
  // The name is read after the membership write, and a rename lists the members after its own
  // write: a rename from another process is either in this notice or reaches the new member.
  const named = changed.length > 0 ? await requireGroup(d, key, id) : group;

  if (changed.length > 0) {
    const entry = groupEvent(tier, {
      group: id,
      actor: caller.user,
      event: op,
      members: changed,
      name: named.name,
      nameRev: named.nameRev ?? 0,
      time: at.time,
      appinfo: groupEventAppinfo({ group: id, event: op, made: d.env.newId() }),
    });
    // Degradation: a huge group's membership news is not fanned out to every member (they read
    // group.info); only those added or removed are told. Elsewhere everyone is, removed members
    // included — they learn of their removal, then receive nothing more.
    const recipients = tier === 'huge' ? changed : op === 'add' ? after : [...new Set([...after, ...changed])];
    await announce(d, caller.tenant, key, tier, recipients, entry);
  }
  const modeBefore = fanoutModeFor(group.tier, d.policy.readFanout);
  const modeAfter = fanoutModeFor(tier, d.policy.readFanout);
  if (modeBefore !== modeAfter) {
    const entry = buildTierEntry({
      group: id,
      actor: caller.user,
      tier,
      fanout: modeAfter,
      gseq: at.gseq,
      time: at.time,
      appinfo: groupEventAppinfo({ group: id, event: 'tier', made: d.env.newId() }),
    });
    await announce(d, caller.tenant, key, tier, after, entry);
    d.env.logger.info({ group: key, from: group.tier, to: tier, members: after.length, gseq: at.gseq }, 'group switched fanout mode');
  }
  return { tier, memberCount: after.length };
}

export async function groupInfo(d: GroupInfoDeps, caller: Caller, id: string): Promise<GroupInfo> {
  const key = groupKey(caller.tenant, id);
  const g = await requireGroup(d, key, id);
  await requireMember(d, key, caller, id);
  return {
    id,
    name: g.name,
    tier: g.tier,
    memberCount: g.memberCount,
    fanout: fanoutModeFor(g.tier, d.policy.readFanout),
    headGseq: await d.stores.groupStreams.headSeq(key),
  };
}
