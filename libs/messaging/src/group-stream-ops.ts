import { clampLimit, filterVisibleGroupMessages, ForbiddenError, groupKey, inboxKey, NotFoundError, pageOf } from '@seqline/core';
import type { Caller, GroupHistoryInput, GroupHistoryResult } from './api.ts';
import type { MessagingDeps } from './deps.ts';

/** Pages a read-fanout group stream within the caller's membership windows (I5). */
export async function groupHistory(d: MessagingDeps, caller: Caller, input: GroupHistoryInput): Promise<GroupHistoryResult> {
  const key = groupKey(caller.tenant, input.id);
  if (!(await d.groups.getGroup(key))) throw new NotFoundError(`group ${input.id} not found`);
  const membership = await d.groups.getMembership(key, caller.user);
  if (!membership) throw new ForbiddenError(`not a member of group ${input.id}`);
  const n = clampLimit(input.limit);
  const rows = input.afterGseq !== undefined
    ? await d.groupStreams.readAfter(key, input.afterGseq, n + 1)
    : await d.groupStreams.readBefore(key, input.beforeGseq ?? Number.MAX_SAFE_INTEGER, n + 1);
  const { items, hasMore } = pageOf(rows, n);
  const visible = filterVisibleGroupMessages(items, membership);
  return { messages: visible.map((e) => ({ ...e, gseq: e.seq })), hasMore };
}

export async function groupAck(d: MessagingDeps, caller: Caller, id: string, gseq: number): Promise<{ cursor: number }> {
  const key = groupKey(caller.tenant, id);
  if (!(await d.groups.getMembership(key, caller.user))) throw new ForbiddenError(`not a member of group ${id}`);
  const head = await d.groupStreams.headSeq(key);
  return { cursor: await d.groupStreams.setCursor(key, inboxKey(caller.tenant, caller.user), Math.min(gseq, head)) };
}
