import {
  BadRequestError,
  canReadGseq,
  clampLimit,
  ForbiddenError,
  groupKey,
  inboxKey,
  NotFoundError,
  visibleRange,
  type Entry,
  type GroupKey,
  type GseqRange,
  type Membership,
} from '@seqline/core';
import type { Caller, GroupHistoryInput, GroupHistoryResult, GroupReadersInput, GroupReadersResult } from './api.ts';
import type { MessagingStores } from './deps.ts';
import { readInboxSideOnAck, type AckReadDeps } from './group-ack-read.ts';

/** Group stream reads and cursors: the stores only (a cursor is not a gseq: no writer). */
export type GroupStreamDeps = { stores: Pick<MessagingStores, 'groups' | 'groupStreams'> };

async function requireMembership(d: GroupStreamDeps, key: GroupKey, caller: Caller, id: string): Promise<Membership> {
  if (!(await d.stores.groups.getGroup(key))) throw new NotFoundError(`group ${id} not found`);
  const membership = await d.stores.groups.getMembership({ key, user: caller.user });
  if (!membership) throw new ForbiddenError(`not a member of group ${id}`);
  return membership;
}

/**
 * Pages a group stream within the caller's membership windows (I5). Invisible stretches (before
 * a join, between a removal and a re-join) are skipped in the store, not read and filtered, so a
 * member who joined at gseq 50 000 pages from there without reading what came before.
 */
export async function groupHistory(d: GroupStreamDeps, caller: Caller, input: GroupHistoryInput): Promise<GroupHistoryResult> {
  const key = groupKey(caller.tenant, input.id);
  const ranges = visibleRange(await requireMembership(d, key, caller, input.id));
  const n = clampLimit(input.limit);
  const rows =
    input.afterGseq !== undefined
      ? await pageForward(d, key, ranges, input.afterGseq, n + 1)
      : await pageBackward(d, key, ranges, input.beforeGseq ?? Number.MAX_SAFE_INTEGER, n + 1);
  return { messages: rows.slice(0, n).map((e) => ({ ...e, gseq: e.seq })), hasMore: rows.length > n };
}

/** Up to `want` visible entries with gseq > after, ascending. */
async function pageForward(d: GroupStreamDeps, key: GroupKey, ranges: GseqRange[], after: number, want: number): Promise<Entry[]> {
  const out: Entry[] = [];
  for (const r of ranges) {
    if (r.upTo <= after) continue;
    const need = want - out.length;
    const rows = await d.stores.groupStreams.readAfter({ group: key, afterGseq: Math.max(after, r.after), limit: need });
    for (const row of rows) {
      if (row.seq > r.upTo) break;
      out.push(row);
    }
    if (out.length >= want) break;
  }
  return out;
}

/** Up to `want` visible entries with gseq < before, descending. */
async function pageBackward(d: GroupStreamDeps, key: GroupKey, ranges: GseqRange[], before: number, want: number): Promise<Entry[]> {
  const out: Entry[] = [];
  for (const r of [...ranges].reverse()) {
    if (r.after + 1 >= before) continue;
    const need = want - out.length;
    const rows = await d.stores.groupStreams.readBefore({ group: key, beforeGseq: Math.min(before, r.upTo + 1), limit: need });
    for (const row of rows) {
      if (row.seq <= r.after) break;
      out.push(row);
    }
    if (out.length >= want) break;
  }
  return out;
}

/**
 * Moves the caller's cursor (only forward, never past the head); the cursor is "read up to".
 * It also reads the group conversation's inbox side up to what the cursor covers (the copies
 * of messages that mention the caller, group-ack-read.ts), so both counts agree.
 */
export async function groupAck(d: GroupStreamDeps & AckReadDeps, caller: Caller, id: string, gseq: number): Promise<{ cursor: number }> {
  const key = groupKey(caller.tenant, id);
  const membership = await d.stores.groups.getMembership({ key, user: caller.user });
  if (!membership) throw new ForbiddenError(`not a member of group ${id}`);
  const head = await d.stores.groupStreams.headSeq(key);
  const cursor = await d.stores.groupStreams.setCursor({
    group: key,
    inbox: inboxKey(caller.tenant, caller.user),
    gseq: Math.min(gseq, head),
  });
  // gseq 0 is a query ("where is my cursor"): it writes nothing.
  if (gseq > 0) await readInboxSideOnAck(d, caller, id, membership, cursor, head);
  return { cursor };
}

/**
 * Receipts in read-fanout groups (docs/large-groups.md): no per-reader receipt entries; a
 * message's readers are the members who may read it and whose cursor has reached its gseq,
 * computed on request. Only the message's sender and the group admin may ask.
 */
export async function groupReaders(d: GroupStreamDeps, caller: Caller, input: GroupReadersInput): Promise<GroupReadersResult> {
  const key = groupKey(caller.tenant, input.id);
  const group = await d.stores.groups.getGroup(key);
  if (!group) throw new NotFoundError(`group ${input.id} not found`);
  const [message] = await d.stores.groupStreams.readAfter({ group: key, afterGseq: input.gseq - 1, limit: 1 });
  if (!message || message.seq !== input.gseq) throw new NotFoundError(`no message at gseq ${input.gseq} in group ${input.id}`);
  if (message.kind !== 'msg') throw new BadRequestError(`gseq ${input.gseq} is not a message`);
  const own = await d.stores.groups.getMembership({ key, user: caller.user });
  if (!canReadGseq(own, input.gseq)) throw new ForbiddenError(`not a member of group ${input.id} at gseq ${input.gseq}`);
  if (caller.user !== message.from && caller.user !== group.admin) {
    throw new ForbiddenError('only the sender or the group admin lists readers');
  }
  // Windows and cursors in one read each, not one per member. Who joined after the message is
  // neither reader nor unread.
  const [memberships, cursors] = await Promise.all([d.stores.groups.listMemberships(key), d.stores.groupStreams.listCursors(key)]);
  const readers: string[] = [];
  let unread = 0;
  for (const m of memberships) {
    if (m.user === message.from || !canReadGseq(m, input.gseq)) continue;
    if ((cursors.get(inboxKey(caller.tenant, m.user)) ?? 0) >= input.gseq) readers.push(m.user);
    else unread++;
  }
  const limit = clampLimit(input.limit);
  const page = readers.filter((u) => input.after === undefined || u > input.after);
  return {
    gseq: input.gseq,
    readCount: readers.length,
    unreadCount: unread,
    readers: page.slice(0, limit),
    hasMore: page.length > limit,
  };
}
