/**
 * The badge of an offline notification for a member of read-fanout (huge) groups, on the
 * embedded stack: exact and equal to a recount from the raw inbox and streams while each group
 * has at most BADGE_STREAM_ROWS rows above the member's cursor; past that a lower bound flagged
 * `badgeCapped`, read at a cost per notification that the streams' length does not change.
 */
import {
  dedupKeyOf,
  groupKey,
  inboxKey,
  MENTION_ALL,
  recalledKey,
  recountConversations,
  type DedupKey,
  type Entry,
  type NewEntry,
} from '@seqline/core';
import { CountingStores, startHookReceiver, totalCount, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BADGE_MAX_PAGES, BADGE_STREAM_ROWS } from '../src/index.ts';
import {
  badgeOf,
  eventually,
  notifiedTenants,
  NOTIFY_SECRET,
  openNotifyRig,
  type NotifyBody,
  type NotifyRig,
} from './support/offline-notify-rig.ts';

const WINDOW_MS = 200;
const MEMBERS = ['bob', 'carol', 'dave', 'erin']; // with alice, 5: huge in the rig's tiers
let rig: NotifyRig;
let receiver: HookReceiver;
const counting = new CountingStores();
let notified: ReturnType<typeof notifiedTenants>;
let apps = 0;

beforeAll(async () => {
  rig = await openNotifyRig('offline-notify-badge', { workerStores: (s) => counting.wrap(s) });
  receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
  notified = notifiedTenants(rig, receiver, 'bg', WINDOW_MS);
});
afterAll(async () => {
  await rig.close();
  await receiver.close();
});

const tenant = (): string => notified.tenant();
const callsTo = (t: string): NotifyBody[] => notified.callsTo(t);

/** Sends a message; returns its appinfo. */
async function send(t: string, from: string, to: { user: string } | { group: string }, mentions?: string[]): Promise<string> {
  const appinfo = `bg${++apps}`;
  await rig.messaging.send({ tenant: t, user: from }, { appinfo, to, type: 'text', body: { text: 'hi' }, ...(mentions && { mentions }) });
  return appinfo;
}

async function hugeGroup(t: string): Promise<string> {
  const { id, tier } = await rig.messaging.createGroup({ tenant: t, user: 'alice' }, { name: 'big', members: MEMBERS });
  expect(tier).toBe('huge');
  return id;
}

/** `n` messages from alice appended to the group's stream through its single writer, as a group send stores them. */
async function fillStream(t: string, id: string, n: number): Promise<void> {
  for (let done = 0; done < n;) {
    const batch: NewEntry[] = Array.from({ length: Math.min(500, n - done) }, () => ({
      kind: 'msg',
      appinfo: `fill${++apps}`,
      conv: { type: 'group', id },
      from: 'alice',
      sendTime: Date.now(),
      type: 'text',
      body: { text: 'fill' },
    }));
    await rig.deps.writers.groupStream.append({ group: groupKey(t, id), entries: batch });
    done += batch.length;
  }
}

/** A 1:1 message from alice opens a window; its notification is the one after `before` calls. */
async function notifyBob(t: string): Promise<NotifyBody> {
  const before = callsTo(t).length;
  await send(t, 'alice', { user: 'bob' });
  await eventually('the notification', () => callsTo(t).length > before);
  return callsTo(t)[before]!;
}

/**
 * Bob's unread recounted from the raw data: the inbox (core's recount) plus, per group stream,
 * messages from others above his cursor, not recalled, not naming him (those are his inbox copies).
 */
async function recountBadge(t: string, groups: readonly string[]): Promise<number> {
  const inbox = await rig.engine.timeline.readAfter({ inbox: inboxKey(t, 'bob'), afterSeq: 0, limit: 100_000 });
  let n = 0;
  for (const record of recountConversations(inbox, 'bob').values()) n += record.unread;
  for (const id of groups) {
    const key = groupKey(t, id);
    const rows = await rig.engine.groupStreams.readAfter({ group: key, afterGseq: 0, limit: 100_000 });
    const cursor = await rig.engine.groupStreams.getCursor({ group: key, inbox: inboxKey(t, 'bob') });
    const recalled = new Set<DedupKey>(rows.flatMap((r) => (r.kind === 'recall' && r.recall ? [recalledKey(r.from, r.recall)] : [])));
    const counts = (r: Entry) =>
      r.kind === 'msg' && r.seq > cursor && r.from !== 'bob' && !recalled.has(dedupKeyOf(r)) && !(r.mentions ?? []).includes('bob');
    n += rows.filter(counts).length;
  }
  return n;
}

async function queuesIdle(): Promise<boolean> {
  return Object.values(rig.queue.stats()).every((s) => s.running + s.waiting + s.delayed === 0);
}

describe('the offline badge of a member of huge groups', () => {
  it('below the bound it is exact: the recount of the inbox and the streams, and what `conversations` sums', async () => {
    const t = tenant();
    const [a, b, c] = [await hugeGroup(t), await hugeGroup(t), await hugeGroup(t)];
    // a: bob's own message, two plain ones (one recalled), an @all, one naming bob (an inbox copy).
    await send(t, 'bob', { group: a });
    await send(t, 'alice', { group: a });
    const recalled = await send(t, 'alice', { group: a });
    await send(t, 'carol', { group: a }, [MENTION_ALL]);
    await send(t, 'dave', { group: a }, ['bob']);
    await rig.messaging.recall({ tenant: t, user: 'alice' }, recalled);
    // b: read up to its head by bob, then one more.
    for (let i = 0; i < 3; i++) await send(t, 'alice', { group: b });
    await rig.messaging.groupAck({ tenant: t, user: 'bob' }, b, await rig.engine.groupStreams.headSeq(groupKey(t, b)));
    await send(t, 'erin', { group: b });
    // c: exactly the bound above the cursor: still exact.
    await fillStream(t, c, BADGE_STREAM_ROWS);
    // The mention copy notifies on its own; the badge checked is the next call's.
    await eventually('the mention notified', () => callsTo(t).length === 1);

    const call = await notifyBob(t);
    const recount = await recountBadge(t, [a, b, c]);
    // inbox: the mention copy and the 1:1 message; a: alice's, the @all; b: erin's; c: all of it.
    expect(recount).toBe(2 + 2 + 1 + BADGE_STREAM_ROWS);
    expect(call.badge).toBe(recount);
    expect(call).not.toHaveProperty('badgeCapped');
    expect(call.badge).toBe(await badgeOf(rig, t, 'bob'));
  });

  it('past the bound: a lower bound flagged badgeCapped, read at the same cost whatever the streams hold', async () => {
    const GROUPS = 12;
    const reads = [];
    for (const rowsPerGroup of [3 * BADGE_STREAM_ROWS, 6 * BADGE_STREAM_ROWS]) {
      const t = tenant();
      const groups: string[] = [];
      for (let g = 0; g < GROUPS; g++) groups.push(await hugeGroup(t));
      for (const id of groups) await fillStream(t, id, rowsPerGroup);
      await eventually('the group jobs done', queuesIdle);
      counting.reset(t);

      const call = await notifyBob(t);
      const { calls, rows } = counting.of(t);
      // Per notification: the list pages, and per group a head, a membership, a cursor and one read of rows.
      expect(rows.get('groupStreams.readBefore')).toBe(GROUPS * BADGE_STREAM_ROWS);
      expect(calls.get('groupStreams.headSeq')).toBe(GROUPS);
      expect(totalCount(calls)).toBeLessThanOrEqual(BADGE_MAX_PAGES + 4 * GROUPS);

      // Each group's walk stops at the bound: the 1:1 message plus BADGE_STREAM_ROWS a group.
      expect(call).toMatchObject({ badge: 1 + GROUPS * BADGE_STREAM_ROWS, badgeCapped: true });
      expect(await recountBadge(t, groups)).toBe(1 + GROUPS * rowsPerGroup);
      expect(await badgeOf(rig, t, 'bob')).toBe(1 + GROUPS * rowsPerGroup); // `conversations`: exact up to 2 000 rows
      reads.push({ calls: Object.fromEntries(calls), rows: Object.fromEntries(rows) });
    }
    // Twice the rows in every stream, the same reads.
    expect(reads[1]).toEqual(reads[0]);
  });
});
