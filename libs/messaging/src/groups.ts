import {
  assertGroupSize, BadRequestError, buildGroupEventEntry, fanoutModeFor, ForbiddenError, groupKey,
  isCurrentMember, NotFoundError, tierFor, type GroupKey, type GroupRecord, type NewEntry, type Tier,
} from '@seqline/core';
import type { Caller, GroupInfo } from './api.ts';
import type { MessagingDeps } from './deps.ts';
import { FANOUT_QUEUE, toJson, type FanoutJob } from './jobs.ts';

/**
 * Group rules (recorded in docs/decisions.md): the creator is the admin; any current member may
 * add members; only the admin removes others, and anyone may remove themself (leave).
 */
async function requireGroup(d: MessagingDeps, key: GroupKey, id: string): Promise<GroupRecord> {
  const g = await d.groups.getGroup(key);
  if (!g) throw new NotFoundError(`group ${id} not found`);
  return g;
}

async function requireMember(d: MessagingDeps, key: GroupKey, caller: Caller, id: string): Promise<void> {
  if (!isCurrentMember(await d.groups.getMembership(key, caller.user))) {
    throw new ForbiddenError(`not a member of group ${id}`);
  }
}

/** Writes a `group` control entry to the given members (degraded away for huge groups later). */
async function announce(d: MessagingDeps, caller: Caller, key: GroupKey, recipients: string[], entry: NewEntry): Promise<void> {
  if (recipients.length === 0) return;
  const job: FanoutJob = { tenant: caller.tenant, groupKey: key, entry, recipients };
  await d.queue.enqueue(FANOUT_QUEUE, `group:${caller.tenant}:${entry.appinfo}`, toJson(job));
}

async function changeAt(d: MessagingDeps, key: GroupKey): Promise<{ time: number; gseq: number }> {
  return { time: d.clock.now(), gseq: await d.groupStreams.headSeq(key) };
}

export async function createGroup(
  d: MessagingDeps, caller: Caller, input: { name: string; members: string[]; id?: string },
): Promise<{ id: string; tier: Tier }> {
  const id = input.id ?? d.newId();
  const key = groupKey(caller.tenant, id);
  const members = [...new Set([caller.user, ...input.members])].sort();
  const t = d.tiers();
  assertGroupSize(members.length, t);
  const tier = tierFor(members.length, undefined, t);
  const now = d.clock.now();
  const record: GroupRecord = {
    key, tenant: caller.tenant, id, name: input.name, admin: caller.user, tier,
    memberCount: members.length, createdAt: now,
  };
  if (!(await d.groups.createGroup(record, members, { time: now, gseq: 0 }))) {
    throw new BadRequestError(`group ${id} already exists`);
  }
  const entry = buildGroupEventEntry({
    group: id, actor: caller.user, event: 'create', members, name: input.name, tier, time: now,
    appinfo: `group:${id}:create`,
  });
  await announce(d, caller, key, members, entry);
  return { id, tier };
}

export async function changeMembers(
  d: MessagingDeps, caller: Caller, id: string, members: string[], op: 'add' | 'remove',
): Promise<{ tier: Tier; memberCount: number }> {
  const key = groupKey(caller.tenant, id);
  const group = await requireGroup(d, key, id);
  await requireMember(d, key, caller, id);
  const unique = [...new Set(members)];
  if (op === 'remove' && caller.user !== group.admin && unique.some((m) => m !== caller.user)) {
    throw new ForbiddenError('only the group admin removes other members');
  }
  const t = d.tiers();
  const before = await d.groups.listMembers(key);
  if (op === 'add') assertGroupSize(new Set([...before, ...unique]).size, t);
  const at = await changeAt(d, key);
  const changed = op === 'add'
    ? await d.groups.addMembers(key, unique, at)
    : await d.groups.removeMembers(key, unique, at);
  const after = await d.groups.listMembers(key);
  const tier = tierFor(after.length, group.tier, t);
  await d.groups.updateGroup(key, { memberCount: after.length, tier });
  if (changed.length > 0) {
    const entry = buildGroupEventEntry({
      group: id, actor: caller.user, event: op, members: changed, time: at.time,
      appinfo: `group:${id}:${op}:${d.newId()}`,
    });
    // Removed members learn of their removal too; then they receive nothing more.
    const recipients = op === 'add' ? after : [...new Set([...after, ...changed])];
    await announce(d, caller, key, recipients, entry);
  }
  return { tier, memberCount: after.length };
}

export async function groupInfo(d: MessagingDeps, caller: Caller, id: string): Promise<GroupInfo> {
  const key = groupKey(caller.tenant, id);
  const g = await requireGroup(d, key, id);
  await requireMember(d, key, caller, id);
  return {
    id, name: g.name, tier: g.tier, memberCount: g.memberCount,
    fanout: fanoutModeFor(g.tier, d.readFanout), headGseq: await d.groupStreams.headSeq(key),
  };
}
